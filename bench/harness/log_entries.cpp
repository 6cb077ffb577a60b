#include "log_entries.hpp"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <utility>

namespace moat::bench {
namespace {

template <typename T>
T pick(Rng& rng, const std::vector<std::pair<unsigned, T>>& weighted) {
    // Weights in tenths of a percent, summing to 1000.
    auto roll = static_cast<unsigned>(rng.below(1000));
    for (const auto& [weight, value] : weighted) {
        if (roll < weight) {
            return value;
        }
        roll -= weight;
    }
    return weighted.back().second;
}

const std::vector<std::pair<unsigned, const char*>> kOutcomes{{450, "forwarded"}, {350, "cached"},
                                                              {150, "blocked"},   {40, "local"},
                                                              {5, "servfail"},    {5, "refused"}};
const std::vector<std::pair<unsigned, std::uint16_t>> kTypes{{550, 1}, {300, 28}, {120, 65},
                                                             {20, 12}, {5, 16},   {5, 33}};

}  // namespace

std::int64_t unix_now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Zipf::Zipf(std::size_t n) : cdf_(n) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sum += 1.0 / static_cast<double>(i + 1);
        cdf_[i] = sum;
    }
    for (double& c : cdf_) {
        c /= sum;
    }
}

std::size_t Zipf::draw(Rng& rng) const {
    const double u = static_cast<double>(rng.next() >> 11U) * 0x1.0p-53;
    return static_cast<std::size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
}

HouseholdEntries::HouseholdEntries(const NameList& names, std::size_t clients, std::uint64_t seed)
    : names_(names), rng_(seed), popular_(names.size()), devices_(clients) {}

void HouseholdEntries::next(std::int64_t time_us, querylog::Entry& out) {
    out = querylog::Entry{};
    out.time_us = time_us;
    const auto device = static_cast<std::uint8_t>(devices_.draw(rng_));
    out.client = IpAddress::v4_of(192, 168, 1, static_cast<std::uint8_t>(10 + device));
    out.qname.assign(names_[popular_.draw(rng_)]);
    out.outcome = pick(rng_, kOutcomes);
    out.qtype = pick(rng_, kTypes);
    out.latency_us = static_cast<std::uint32_t>(rng_.below(40'000));
    if (std::string_view(out.outcome) == "forwarded") {
        out.upstream.assign(rng_.chance(50) ? "127.0.0.1:5301" : "127.0.0.1:5302");
    } else if (std::string_view(out.outcome) == "blocked") {
        out.list.assign("big list");
        out.line = static_cast<std::uint32_t>(rng_.below(1'000'000) + 1);
        out.ede = 15;
    }
}

}  // namespace moat::bench
