// Names answered by dnsmoat itself: the config's [local] records and hosts file, with PTR records
// generated for every A/AAAA name (so `dig -x 192.168.1.10` finds `nas.lan`).
//
// Built once per config load by the app, then read-only: any number of threads may call find().
// Lookups take the lower-cased wire-form name and never allocate. Every query is looked up here
// first, and most are not local. The index is a flat table of (64-bit hash, entry) slots, at most
// half full and probed linearly, so a name that is not local costs one read of one slot line,
// whether the zone holds ten names or a hosts file of thousands. A node-based map cost a bucket
// read and a chain of node reads, each a cache miss in a daemon whose caches the kernel's
// network work has just churned (perf put 23% of the daemon's own time there under a load of
// hosts-file names).
#pragma once

#include <climits>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine {

struct LocalRecord {
    wire::RrType type{};
    std::vector<std::uint8_t> rdata;  ///< uncompressed

    friend bool operator==(const LocalRecord&, const LocalRecord&) = default;
};

/// A line of a hosts file that could not be used: its 1-based number and why.
struct HostsLineError {
    std::size_t line = 0;
    std::string reason;
};

class LocalZone {
public:
    void add_address(const wire::Name& name, const IpAddress& address);
    void add_name_record(const wire::Name& name, wire::RrType type, const wire::Name& target);
    /// TXT text; split into strings of at most 255 octets.
    void add_txt(const wire::Name& name, std::string_view text);
    /// Reads hosts-format text ("IP name [alias...]", `#` comments); returns the bad lines.
    std::vector<HostsLineError> add_hosts_text(std::string_view text);
    /// Adds a PTR for each A/AAAA name at its reverse name, unless that name has a PTR already.
    void generate_reverse();

    /// The records at a lower-cased wire-form name, or null when the name is not local.
    [[nodiscard]] const std::vector<LocalRecord>* find(
        std::span<const std::uint8_t> lower_wire) const noexcept;
    /// The same, given the name's hash (filter::SuffixHashes::whole(), which the pipeline has).
    [[nodiscard]] const std::vector<LocalRecord>* find(std::span<const std::uint8_t> lower_wire,
                                                       std::uint64_t name_hash) const noexcept;
    [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
    [[nodiscard]] std::size_t name_count() const noexcept { return entries_.size(); }

private:
    struct Entry {
        std::string name;  ///< lower-cased wire form
        std::vector<LocalRecord> records;
    };
    struct Slot {
        std::uint64_t hash = 0;
        std::uint32_t entry = kNoEntry;
    };
    static constexpr std::uint32_t kNoEntry = UINT32_MAX;

    void add(const wire::Name& name, LocalRecord record);
    /// The index in entries_ of a lower-cased wire-form name whose hash is `hash`, or kNoEntry.
    [[nodiscard]] std::uint32_t find_entry(std::string_view lower_wire,
                                           std::uint64_t hash) const noexcept;
    /// Doubles the slots (from 16) and places every entry again.
    void grow();

    std::vector<Entry> entries_;
    std::vector<Slot> slots_;  ///< a power of two in size, at most half full
    /// Every address added, with its name, in the order given: the first name given for an
    /// address (a hosts line's canonical name) is the one its PTR names.
    std::vector<std::pair<wire::Name, IpAddress>> addresses_;
};

/// The reverse-lookup name of an address ("10.1.168.192.in-addr.arpa", or the 32-nibble
/// ip6.arpa name).
[[nodiscard]] wire::Name reverse_name(const IpAddress& address);

}  // namespace moat::engine
