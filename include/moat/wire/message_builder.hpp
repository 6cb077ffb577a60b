// Writes DNS messages: header, questions, records with full name compression, EDNS(0) OPT.
//
// Output goes into a caller's span (nothing allocated; reuse the builder and the span for every
// message) or into a std::vector that grows as needed. The message never exceeds the size limit
// (512 for a classic UDP answer, the client's EDNS size, 65535 for TCP). A record that would
// cross the limit is rolled back whole and the builder stops: in the answer or authority section
// it sets TC (RFC 2181 §9, the client retries over TCP); in the additional section it drops the
// record without TC, since additional data is optional. Space for OPT is reserved as soon as
// set_edns() is called, so OPT always fits.
//
// Names are compressed against every name already written whose type allows it (RFC 3597 §4:
// owners, questions and the names in RDATA of the RFC 1035 types); see compression_table.hpp.
// Names in the RDATA of other types are written in full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <tl/expected.hpp>
#include <vector>

#include "moat/core/bytes.hpp"
#include "moat/wire/compression_table.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire {

struct Record;

/// The OPT record to write (RFC 6891 §6.1.2). The extended rcode comes from set_rcode().
struct EdnsOptions {
    std::uint16_t udp_payload_size = 1232;  ///< octets; values below 512 are sent as 512
    std::uint8_t version = 0;
    bool dnssec_ok = false;
    /// Already encoded options: (u16 code, u16 length, data)...; must stay alive until finish().
    std::span<const std::uint8_t> options;
};

class MessageBuilder {
public:
    /// Writes into `buffer`; the message never exceeds min(buffer.size(), max_size).
    explicit MessageBuilder(std::span<std::uint8_t> buffer,
                            std::size_t max_size = kMaxMessageSize) noexcept;
    /// Writes into `*out`, resized as needed and to the final size by finish(). A pointer, so
    /// that passing a vector where a span was meant does not silently pick this mode.
    explicit MessageBuilder(std::vector<std::uint8_t>* out,
                            std::size_t max_size = kMaxMessageSize) noexcept;

    /// Starts a new message in the same output, forgetting the previous one.
    void reset(std::size_t max_size = kMaxMessageSize) noexcept;

    /// ID and flags. The section counts, TC (when the builder truncated) and an rcode given to
    /// set_rcode() are applied by finish() over whatever is set here.
    [[nodiscard]] Header& header() noexcept { return header_; }
    /// Sets the response code; codes above 15 need set_edns() before finish().
    void set_rcode(Rcode rcode) noexcept;

    /// Reserves room for an OPT record written by finish().
    Status set_edns(const EdnsOptions& edns) noexcept;

    /// Adds a question. Questions come before any record.
    Status add_question(std::span<const std::uint8_t> qname, RrType qtype,
                        RrClass qclass = RrClass::in) noexcept;
    Status add_question(const Name& qname, RrType qtype, RrClass qclass = RrClass::in) noexcept {
        return add_question(qname.wire(), qtype, qclass);
    }

    /// Adds a record. `owner` is an uncompressed wire-form name, `rdata` uncompressed RDATA (as
    /// in Record). Sections must be added in order. Errc::truncated when the record did not fit
    /// (nothing of it was written), Errc::rdata_length when `rdata` does not match its type.
    Status add_record(Section section, std::span<const std::uint8_t> owner, RrType type,
                      std::uint16_t rclass, std::uint32_t ttl,
                      std::span<const std::uint8_t> rdata) noexcept;
    Status add(Section section, const Record& record) noexcept;

    /// Writes the header counts and the OPT record and returns the message.
    tl::expected<std::span<const std::uint8_t>, WireError> finish() noexcept;

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool truncated() const noexcept { return stopped_; }

private:
    /// Makes room for `n` more octets within the limit; false when they do not fit.
    bool reserve(std::size_t n) noexcept {
        return (size_ + n + reserved_ <= limit_ && size_ + n <= capacity_) || grow(n);
    }
    bool grow(std::size_t n) noexcept;
    [[nodiscard]] std::size_t room() const noexcept {
        const std::size_t used = size_ + reserved_;
        return used >= limit_ ? 0 : limit_ - used;
    }
    // Writers after a successful reserve().
    void put_u16(std::uint16_t v) noexcept {
        store_u16(data_ + size_, v);
        size_ += 2;
    }
    void put_u32(std::uint32_t v) noexcept {
        store_u32(data_ + size_, v);
        size_ += 4;
    }
    void put_bytes(const std::uint8_t* p, std::size_t n) noexcept {
        if (n != 0) {  // memcpy from an empty vector's null data() is undefined
            std::memcpy(data_ + size_, p, n);
            size_ += n;
        }
    }
    /// Writes an uncompressed name of `length` octets that the caller has checked.
    bool write_name(const std::uint8_t* name, std::size_t length, bool compress) noexcept;
    Status add_checked(Section section, const std::uint8_t* owner, std::size_t owner_length,
                       RrType type, std::uint16_t rclass, std::uint32_t ttl,
                       std::span<const std::uint8_t> rdata) noexcept;
    bool write_rdata(RrType type, std::span<const std::uint8_t> rdata, WireError& error) noexcept;
    std::uint16_t* count_for(Section section) noexcept;

    std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
    std::size_t limit_ = 0;     ///< the size the message may reach
    std::size_t reserved_ = 0;  ///< octets kept free for OPT
    std::vector<std::uint8_t>* vector_ = nullptr;
    std::span<std::uint8_t> span_;

    Header header_;
    std::array<std::uint16_t, 4> counts_{};  ///< questions, answer, authority, additional
    Rcode rcode_ = Rcode::noerror;
    bool rcode_set_ = false;
    Section last_section_ = Section::answer;
    bool has_records_ = false;
    bool stopped_ = false;
    bool tc_ = false;  ///< a record of the answer or authority section did not fit
    bool has_edns_ = false;
    EdnsOptions edns_;

    /// A name written recently, kept whole for the two cheap cases: the same name again, or
    /// one more label in front of it. These skip the trie walk; they give the same result.
    struct RecentName {
        std::array<std::uint8_t, kMaxNameLength> name;
        std::size_t length = 0;
        std::uint16_t node = CompressionTable::kRoot;
    };
    static constexpr std::size_t kRecentNames = 4;  ///< owner and RDATA names alternate
    bool write_recent(const std::uint8_t* name, std::size_t length) noexcept;
    void remember(const std::uint8_t* name, std::size_t length, std::uint16_t node) noexcept;
    void forget_recent() noexcept;

    CompressionTable table_;
    std::array<RecentName, kRecentNames> recent_;
    std::size_t recent_next_ = 0;   ///< slot the next name goes to
    std::size_t recent_count_ = 0;  ///< slots in use, the newest just before recent_next_
};

}  // namespace moat::wire
