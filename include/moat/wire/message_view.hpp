// Zero-copy reading of a DNS message.
//
// MessageView::parse() reads the header and every question and nothing else, which is all the
// query path needs. The record sections are read on demand by a RecordRange: over one section
// (answers(), authority(), additional()) or over all three in order (records()). Locating a later
// section is a plain walk over the earlier ones (skip_name + fixed fields + RDLENGTH).
//
// Every view points into the caller's bytes, which must outlive the views. Nothing allocates.
// Owner names handed out are fully validated (see name_decoder.hpp); RDATA is bounds-checked
// against RDLENGTH but its typed contents are checked only when read (rdata.hpp) or by validate().
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <tl/expected.hpp>

#include "moat/wire/header.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/name_decoder.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire {

struct ParseOptions {
    /// Use the suffix cache for names that point at names decoded before. Off only in tests that
    /// prove the cache changes nothing.
    bool suffix_cache = true;
};

struct Question {
    NameView qname;
    RrType qtype{};
    RrClass qclass{};
};

/// One resource record as it sits in the message.
struct RecordView {
    std::span<const std::uint8_t> message;  ///< the whole message (names in RDATA point into it)
    NameView owner;
    RrType type{};
    std::uint16_t rclass = 0;  ///< the class; for OPT the requestor's UDP payload size
    std::uint32_t ttl = 0;     ///< for OPT: extended rcode, version and flags
    std::uint16_t rdata_offset = 0;
    std::uint16_t rdata_length = 0;
    Section section{};

    [[nodiscard]] std::span<const std::uint8_t> rdata() const noexcept {
        return message.subspan(rdata_offset, rdata_length);
    }
};

/// Reads records from one section or from all of them, yielding RecordViews. The first error
/// stops the range and stays available through error(). Single pass: begin() restarts it.
class RecordRange {
public:
    class Iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = RecordView;
        using difference_type = std::ptrdiff_t;

        Iterator() = default;
        explicit Iterator(RecordRange* range) noexcept : range_(range), current_(range->next()) {}
        const RecordView& operator*() const noexcept { return *current_; }
        const RecordView* operator->() const noexcept { return current_; }
        Iterator& operator++() noexcept {
            current_ = range_->next();
            return *this;
        }
        void operator++(int) noexcept { ++*this; }
        bool operator==(std::default_sentinel_t /*end*/) const noexcept {
            return current_ == nullptr;
        }

    private:
        RecordRange* range_ = nullptr;
        const RecordView* current_ = nullptr;
    };

    /// Restarts and returns the first record.
    Iterator begin() noexcept {
        restart();
        return Iterator(this);
    }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

    /// The next record, or null at the end or on an error.
    const RecordView* next() noexcept;
    void restart() noexcept;

    /// The first error met, if any.
    [[nodiscard]] const std::optional<WireError>& error() const noexcept { return error_; }
    /// Offset just past the last record read (the message end when the range is exhausted).
    [[nodiscard]] std::size_t position() const noexcept { return pos_; }
    /// The cache of names already decoded; typed RDATA readers may share it.
    [[nodiscard]] SuffixCache* suffix_cache() noexcept { return use_cache_ ? cache() : nullptr; }

private:
    friend class MessageView;
    RecordRange(std::span<const std::uint8_t> msg, std::size_t start,
                std::array<std::uint16_t, 3> counts, Section first, Section last,
                const SuffixCache::Entry& seed, bool use_cache) noexcept;
    static RecordRange failed(WireError error) noexcept;

    std::span<const std::uint8_t> msg_;
    std::array<std::uint16_t, 3> counts_{};
    std::size_t start_ = 0;
    std::size_t pos_ = 0;
    std::uint16_t left_ = 0;
    Section first_{};
    Section last_{};
    Section section_{};
    bool use_cache_ = true;
    std::optional<WireError> failed_;  ///< set when the section could not even be located
    std::optional<WireError> error_;
    // Facts about names in this message; they stay true, so restart() keeps them.
    // Set up on first use: a range that meets only root owners (a query's OPT) never pays for
    // clearing it.
    SuffixCache* cache() noexcept {
        if (!cache_ready_) {
            cache_.clear();
            if (seed_.offset != 0) {
                cache_.insert(seed_);
            }
            cache_ready_ = true;
        }
        return &cache_;
    }
    SuffixCache cache_{SuffixCache::Deferred{}};
    SuffixCache::Entry seed_;
    bool cache_ready_ = false;
    RecordView current_;
};

class MessageView {
public:
    /// Reads the header and all questions. Fails on a short header or a malformed question;
    /// does not look at the record sections.
    static tl::expected<MessageView, WireError> parse(std::span<const std::uint8_t> bytes,
                                                      ParseOptions options = {}) noexcept;

    [[nodiscard]] const Header& header() const noexcept { return header_; }
    [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

    /// The first question, or null when there is none. Points into this view, so it lives as
    /// long as the view. (A pointer rather than a copy: reading a copy right after parse() wrote
    /// the fields one by one stalls on store forwarding.)
    [[nodiscard]] const Question* question() const noexcept {
        return header_.qdcount == 0 ? nullptr : &first_question_;
    }
    /// Offset of the first byte after the question section.
    [[nodiscard]] std::size_t answer_offset() const noexcept { return answer_offset_; }

    /// Records of one section; finding authority or additional walks the earlier sections.
    [[nodiscard]] RecordRange section(Section which) const noexcept;
    [[nodiscard]] RecordRange answers() const noexcept { return section(Section::answer); }
    [[nodiscard]] RecordRange authority() const noexcept { return section(Section::authority); }
    [[nodiscard]] RecordRange additional() const noexcept { return section(Section::additional); }
    /// All records of the three sections, in wire order, in one walk.
    [[nodiscard]] RecordRange records() const noexcept;
    /// The message's one record when it has exactly one, in the additional section, owned by the
    /// root, and it fits: the OPT of the usual EDNS query, read without a RecordRange (about 100
    /// instructions fewer). Nothing for any other shape; records() reads those, and reports what
    /// is wrong with them.
    [[nodiscard]] std::optional<RecordView> lone_root_additional() const noexcept;

    /// An empty view (no bytes, no question); parse() is the way to get a real one. Public only
    /// so tl::expected can construct parse()'s result in place.
    MessageView() = default;

private:
    bool read(std::span<const std::uint8_t> bytes, ParseOptions options, WireError& error) noexcept;

    std::span<const std::uint8_t> bytes_;
    Header header_;
    Question first_question_;
    std::size_t answer_offset_ = kHeaderSize;
    SuffixCache::Entry qname_entry_;  ///< seeds each RecordRange's cache (offset 0: none)
    bool use_cache_ = true;
};

/// Walks over `count` records from `pos` without decoding names; returns the offset after them.
tl::expected<std::size_t, WireError> skip_records(std::span<const std::uint8_t> msg,
                                                  std::size_t pos, std::size_t count) noexcept;

}  // namespace moat::wire
