// The name walk. Hot: every owner of every record passes here, so the loop is kept branch-light
// and the cache lookup happens only at pointers.
#include "moat/wire/name_decoder.hpp"

namespace moat::wire {
namespace detail {

namespace {
constexpr PackedWalk failed(Errc code, std::size_t at) noexcept {
    return (static_cast<PackedWalk>(code) << 40U) | (at & 0xFFFFU);
}
}  // namespace

PackedWalk walk_name(const std::uint8_t* base, std::size_t size, std::size_t pos, std::size_t limit,
                     SuffixCache* cache, Compression compression) noexcept {
    std::size_t cur = pos;
    std::size_t segment = pos;  // pointers must target offsets below this
    std::size_t bound = limit;  // before the first pointer, the RDATA or message end
    std::size_t length = 1;     // uncompressed octets, the root label counted
    std::size_t labels = 0;
    std::size_t hops = 0;
    std::size_t end = 0;  // offset after the in-stream part, set at the first pointer
    while (true) {
        if (cur >= bound) {
            return failed(Errc::name_overrun, cur);
        }
        const std::uint8_t octet = base[cur];
        if (octet == 0) {
            if (hops == 0) {
                end = cur + 1;
            }
            break;
        }
        const unsigned kind = octet & 0xC0U;
        if (kind == 0) {
            length += octet + 1U;
            if (length > kMaxNameLength) {
                return failed(Errc::name_too_long, cur);
            }
            ++labels;
            cur += octet + 1U;
            continue;
        }
        if (kind != 0xC0U) {
            return failed(Errc::bad_label_type, cur);
        }
        if (compression == Compression::forbidden) {
            return failed(Errc::compressed_in_rdata, cur);
        }
        if (cur + 1 >= bound) {
            return failed(Errc::name_overrun, cur);
        }
        const std::size_t target = ((octet & 0x3FU) << 8U) | base[cur + 1];
        if (target >= segment || target < kHeaderSize) {
            return failed(Errc::forward_pointer, cur);
        }
        if (hops == 0) {
            end = cur + 2;
            bound = size;
        }
        if (++hops > kMaxPointerHops) {
            return failed(Errc::too_many_hops, cur);
        }
        if (cache != nullptr) {
            // The walk from `target` on is the walk of the name cached there (see the header).
            SuffixCache::Entry hit;
            if (cache->find(static_cast<std::uint16_t>(target), hit) &&
                length - 1 + hit.length <= kMaxNameLength && hops + hit.hops <= kMaxPointerHops) {
                length += hit.length - 1U;
                labels += hit.labels;
                hops += hit.hops;
                break;
            }
        }
        cur = segment = target;
    }
    if (cache != nullptr) {
        cache->insert({static_cast<std::uint16_t>(pos), static_cast<std::uint8_t>(length),
                       static_cast<std::uint8_t>(labels), static_cast<std::uint8_t>(hops)});
    }
    return end | (length << 16U) | (labels << 24U) | (static_cast<PackedWalk>(hops) << 32U);
}

}  // namespace detail

tl::expected<std::size_t, WireError> skip_name(std::span<const std::uint8_t> msg, std::size_t pos,
                                               std::size_t limit) noexcept {
    const std::uint8_t* base = msg.data();
    std::size_t cur = pos;
    while (true) {
        if (cur >= limit) {
            return fail_at(Errc::name_overrun, cur);
        }
        const std::uint8_t octet = base[cur];
        if (octet == 0) {
            return cur + 1;
        }
        const unsigned kind = octet & 0xC0U;
        if (kind == 0xC0U) {
            if (cur + 1 >= limit) {
                return fail_at(Errc::name_overrun, cur);
            }
            return cur + 2;
        }
        if (kind != 0) {
            return fail_at(Errc::bad_label_type, cur);
        }
        cur += octet + 1U;
    }
}

}  // namespace moat::wire
