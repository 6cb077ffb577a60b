#include "moat/cache/cache_error.hpp"

#include <string>

namespace moat::cache {

const char* reason(Errc code) noexcept {
    switch (code) {
        case Errc::miss: return "not in the cache";
        case Errc::no_space: return "buffer smaller than the cached answer";
        case Errc::unchecked: return "cached, but not yet checked against this blocklist";
        case Errc::malformed: return "malformed answer";
        case Errc::not_a_response: return "not a response to a standard query";
        case Errc::question_mismatch: return "answer question does not match the key";
        case Errc::uncacheable_rcode: return "response code is never cached";
        case Errc::truncated: return "truncated answer";
        case Errc::no_soa: return "negative answer without SOA";
        case Errc::zero_ttl: return "zero TTL";
        case Errc::too_large: return "answer larger than the cache shard";
    }
    return "unknown cache error";
}

namespace {

class CacheCategory final : public std::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "moat.cache"; }
    [[nodiscard]] std::string message(int value) const override {
        return reason(static_cast<Errc>(value));
    }
};

}  // namespace

const std::error_category& cache_category() noexcept {
    static const CacheCategory kCategory;
    return kCategory;
}

}  // namespace moat::cache
