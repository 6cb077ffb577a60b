#include "moat/engine/local_zone.hpp"

#include <arpa/inet.h>

#include <algorithm>

#include "moat/filter/name_hash.hpp"
#include "moat/wire/record.hpp"

namespace moat::engine {
namespace {

std::string key_of(const wire::Name& name) {
    const wire::Name lower = wire::Name::from_view_lower(name.view());
    const auto w = lower.wire();
    return {reinterpret_cast<const char*>(w.data()), w.size()};
}

std::string_view as_key(std::span<const std::uint8_t> lower_wire) noexcept {
    return {reinterpret_cast<const char*>(lower_wire.data()), lower_wire.size()};
}

/// A lower-cased wire-form name's hash: the blocklist's (filter/name_hash.hpp), which the
/// pipeline has computed for every query before it asks here.
std::uint64_t hash_of(std::string_view lower_wire) noexcept {
    return filter::hash_wire_name(reinterpret_cast<const std::uint8_t*>(lower_wire.data()));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
            ++i;
        }
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
            ++i;
        }
        if (i > start) {
            out.push_back(line.substr(start, i - start));
        }
    }
    return out;
}

bool parse_address(std::string_view text, IpAddress& out) {
    const std::string s(text);
    IpAddress ip;
    if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) == 1) {
        out = ip;
        return true;
    }
    if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) == 1) {
        ip.v6 = true;
        out = ip;
        return true;
    }
    return false;
}

}  // namespace

void LocalZone::add(const wire::Name& name, LocalRecord record) {
    std::string key = key_of(name);
    const std::uint64_t hash = hash_of(key);
    if (const std::uint32_t found = find_entry(key, hash); found != kNoEntry) {
        auto& records = entries_[found].records;
        if (std::find(records.begin(), records.end(), record) == records.end()) {
            records.push_back(std::move(record));
        }
        return;
    }
    if ((entries_.size() + 1) * 2 > slots_.size()) {
        grow();
    }
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = hash & mask;
    while (slots_[i].entry != kNoEntry) {
        i = (i + 1) & mask;
    }
    slots_[i] = {hash, static_cast<std::uint32_t>(entries_.size())};
    entries_.push_back({std::move(key), {std::move(record)}});
}

void LocalZone::grow() {
    std::vector<Slot> slots(std::max<std::size_t>(16, slots_.size() * 2));
    const std::size_t mask = slots.size() - 1;
    for (const Slot& old : slots_) {
        if (old.entry == kNoEntry) {
            continue;
        }
        std::size_t i = old.hash & mask;
        while (slots[i].entry != kNoEntry) {
            i = (i + 1) & mask;
        }
        slots[i] = old;
    }
    slots_ = std::move(slots);
}

std::uint32_t LocalZone::find_entry(std::string_view lower_wire,
                                    std::uint64_t hash) const noexcept {
    if (slots_.empty()) {
        return kNoEntry;
    }
    const std::size_t mask = slots_.size() - 1;
    // Terminates: at most half the slots are taken, so an empty one comes.
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
        const Slot& slot = slots_[i];
        if (slot.entry == kNoEntry ||
            (slot.hash == hash && entries_[slot.entry].name == lower_wire)) {
            return slot.entry;
        }
    }
}

void LocalZone::add_address(const wire::Name& name, const IpAddress& address) {
    addresses_.emplace_back(name, address);
    if (address.v6) {
        add(name, {wire::RrType::aaaa, wire::encode::aaaa(address.bytes)});
    } else {
        add(name, {wire::RrType::a, wire::encode::a({address.bytes[0], address.bytes[1],
                                                     address.bytes[2], address.bytes[3]})});
    }
}

void LocalZone::add_name_record(const wire::Name& name, wire::RrType type,
                                const wire::Name& target) {
    add(name, {type, wire::encode::name(target)});
}

void LocalZone::add_txt(const wire::Name& name, std::string_view text) {
    std::vector<std::string_view> strings;
    for (std::size_t i = 0; i < text.size(); i += 255) {
        strings.push_back(text.substr(i, 255));
    }
    if (strings.empty()) {
        strings.emplace_back();
    }
    if (auto rdata = wire::encode::txt(strings)) {
        add(name, {wire::RrType::txt, std::move(*rdata)});
    }
}

std::vector<HostsLineError> LocalZone::add_hosts_text(std::string_view text) {
    std::vector<HostsLineError> errors;
    std::size_t number = 0;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        ++number;
        if (const auto hash = line.find('#'); hash != std::string_view::npos) {
            line = line.substr(0, hash);
        }
        line = trim(line);
        if (line.empty()) {
            continue;
        }
        const auto fields = fields_of(line);
        IpAddress address;
        if (fields.size() < 2) {
            errors.push_back({number, "expected \"ADDRESS NAME [ALIAS...]\""});
            continue;
        }
        if (!parse_address(fields[0], address)) {
            errors.push_back({number, "\"" + std::string(fields[0]) + "\" is not an IP address"});
            continue;
        }
        for (std::size_t i = 1; i < fields.size(); ++i) {
            auto name = wire::Name::from_text(fields[i]);
            if (!name || name->label_count() == 0) {
                errors.push_back({number, "\"" + std::string(fields[i]) + "\" is not a host name"});
                continue;
            }
            add_address(*name, address);
        }
    }
    return errors;
}

void LocalZone::generate_reverse() {
    for (const auto& [name, address] : addresses_) {
        const wire::Name reverse = reverse_name(address);
        const std::string key = key_of(reverse);
        const std::uint32_t entry = find_entry(key, hash_of(key));
        const bool has_ptr =
            entry != kNoEntry &&
            std::any_of(entries_[entry].records.begin(), entries_[entry].records.end(),
                        [](const LocalRecord& r) { return r.type == wire::RrType::ptr; });
        if (!has_ptr) {  // the first name given for an address wins; explicit PTRs always do
            add_name_record(reverse, wire::RrType::ptr, wire::Name::from_view_lower(name.view()));
        }
    }
}

const std::vector<LocalRecord>* LocalZone::find(
    std::span<const std::uint8_t> lower_wire) const noexcept {
    return find(lower_wire, hash_of(as_key(lower_wire)));
}

const std::vector<LocalRecord>* LocalZone::find(std::span<const std::uint8_t> lower_wire,
                                                std::uint64_t name_hash) const noexcept {
    const std::uint32_t entry = find_entry(as_key(lower_wire), name_hash);
    return entry == kNoEntry ? nullptr : &entries_[entry].records;
}

wire::Name reverse_name(const IpAddress& address) {
    std::string text;
    static constexpr std::string_view kHex = "0123456789abcdef";
    if (address.v6) {
        for (std::size_t i = 16; i-- > 0;) {
            text += kHex[address.bytes[i] & 0x0FU];
            text += '.';
            text += kHex[address.bytes[i] >> 4U];
            text += '.';
        }
        text += "ip6.arpa";
    } else {
        for (std::size_t i = 4; i-- > 0;) {
            text += std::to_string(address.bytes[i]);
            text += '.';
        }
        text += "in-addr.arpa";
    }
    return *wire::Name::from_text(text);
}

}  // namespace moat::engine
