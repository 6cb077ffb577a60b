// Names answered by dnsmoat itself: the config's [local] records and hosts file, with PTR records
// generated for every A/AAAA name (so `dig -x 192.168.1.10` finds `nas.lan`).
//
// Built once per config load by the app, then read-only: any number of threads may call find().
// Lookups take the lower-cased wire-form name and never allocate. Every query is looked up here
// first, and most are not local: a hash table over the name bytes (transparent, so a lookup
// hashes the query's bytes in place) answers in one probe whether the zone holds ten names or a
// hosts file of thousands, where a tree made a dozen comparisons.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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
    [[nodiscard]] bool empty() const noexcept { return names_.empty(); }
    [[nodiscard]] std::size_t name_count() const noexcept { return names_.size(); }

private:
    void add(const wire::Name& name, LocalRecord record);

    /// Hashes a key and a looked-up name's bytes alike.
    struct NameBytesHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view bytes) const noexcept {
            return std::hash<std::string_view>{}(bytes);
        }
    };
    std::unordered_map<std::string, std::vector<LocalRecord>, NameBytesHash, std::equal_to<>>
        names_;
    /// Every address added, with its name, in the order given: the first name given for an
    /// address (a hosts line's canonical name) is the one its PTR names.
    std::vector<std::pair<wire::Name, IpAddress>> addresses_;
};

/// The reverse-lookup name of an address ("10.1.168.192.in-addr.arpa", or the 32-nibble
/// ip6.arpa name).
[[nodiscard]] wire::Name reverse_name(const IpAddress& address);

}  // namespace moat::engine
