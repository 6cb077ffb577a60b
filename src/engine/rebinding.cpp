#include "rebinding.hpp"

#include <algorithm>
#include <array>

#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"

namespace moat::engine {
namespace {

Cidr v4(std::uint8_t a, std::uint8_t b, std::uint8_t prefix) {
    return {IpAddress::v4_of(a, b, 0, 0), prefix};
}
Cidr v6(std::uint8_t first, std::uint8_t second, std::uint8_t prefix) {
    IpAddress ip{{}, true};
    ip.bytes[0] = first;
    ip.bytes[1] = second;
    return {ip, prefix};
}

const std::array<Cidr, 11>& internal_ranges() {
    static const std::array<Cidr, 11> kRanges = [] {
        IpAddress loopback6{{}, true};
        loopback6.bytes[15] = 1;
        return std::array<Cidr, 11>{v4(0, 0, 8),          v4(10, 0, 8),
                                    v4(100, 64, 10),      v4(127, 0, 8),
                                    v4(169, 254, 16),     v4(172, 16, 12),
                                    v4(192, 168, 16),     Cidr{IpAddress{{}, true}, 128},  // ::
                                    Cidr{loopback6, 128},                                  // ::1
                                    v6(0xfc, 0, 7),       v6(0xfe, 0x80, 10)};
    }();
    return kRanges;
}

}  // namespace

bool is_internal_address(const IpAddress& address) noexcept {
    const IpAddress plain = address.unmapped();
    const auto& ranges = internal_ranges();
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const Cidr& c) { return c.contains(plain); });
}

bool has_internal_address(std::span<const std::uint8_t> answer) noexcept {
    const auto view = wire::MessageView::parse(answer);
    if (!view) {
        return false;
    }
    for (const wire::RecordView& rr : view->answers()) {
        IpAddress ip;
        if (rr.type == wire::RrType::a) {
            const auto a = wire::rdata::read_a(rr);
            if (!a) {
                continue;
            }
            ip = IpAddress::v4_of(a->address[0], a->address[1], a->address[2], a->address[3]);
        } else if (rr.type == wire::RrType::aaaa) {
            const auto a = wire::rdata::read_aaaa(rr);
            if (!a) {
                continue;
            }
            ip = IpAddress{a->address, true};
        } else {
            continue;
        }
        if (is_internal_address(ip)) {
            return true;
        }
    }
    return false;
}

}  // namespace moat::engine
