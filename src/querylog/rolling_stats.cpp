#include "moat/querylog/rolling_stats.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

namespace moat::querylog {

void TopCounter::add(std::string_view key, std::uint64_t weight) {
    constexpr std::uint64_t kMaxCount = std::numeric_limits<std::uint32_t>::max();
    const auto grown = [&](std::uint32_t count) {
        return static_cast<std::uint32_t>(std::min(kMaxCount, count + std::min(weight, kMaxCount)));
    };
    if (heap_.size() != counts_.size()) {
        build_heap();
    }
    if (auto it = counts_.find(key); it != counts_.end()) {
        it->second.count = grown(it->second.count);
        sift_down(it->second.heap_index);
        return;
    }
    if (counts_.size() < slots_) {
        auto [it, inserted] = counts_.emplace(key, Slot{grown(0), 0});
        heap_.push_back(&*it);
        place(heap_.size() - 1, &*it);
        sift_up(heap_.size() - 1);
        return;
    }
    if (heap_.empty()) {
        return;  // no slots at all
    }
    // Space-saving: the newcomer takes the smallest slot and inherits its count, so a heavy
    // key arriving late is never under-counted. The node is taken out, renamed and put back:
    // no allocation unless the new name outgrows the old one's buffer.
    auto node = counts_.extract(heap_.front()->first);
    node.key().assign(key);
    node.mapped().count = grown(node.mapped().count);
    const auto reinserted = counts_.insert(std::move(node));
    place(0, &*reinserted.position);
    sift_down(0);
}

void TopCounter::build_heap() {
    heap_.clear();
    heap_.reserve(counts_.size());
    for (Kept& kept : counts_) {
        heap_.push_back(&kept);
        place(heap_.size() - 1, &kept);
    }
    for (std::size_t i = heap_.size() / 2; i-- > 0;) {
        sift_down(i);
    }
}

void TopCounter::sift_down(std::size_t i) noexcept {
    Kept* const moving = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) {
            break;
        }
        if (child + 1 < n && heap_[child + 1]->second.count < heap_[child]->second.count) {
            ++child;
        }
        if (heap_[child]->second.count >= moving->second.count) {
            break;
        }
        place(i, heap_[child]);
        i = child;
    }
    place(i, moving);
}

void TopCounter::sift_up(std::size_t i) noexcept {
    Kept* const moving = heap_[i];
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (heap_[parent]->second.count <= moving->second.count) {
            break;
        }
        place(i, heap_[parent]);
        i = parent;
    }
    place(i, moving);
}

void Counts::add(std::string_view outcome, std::uint64_t n) noexcept {
    queries += n;
    if (outcome == "blocked") {
        blocked += n;
    } else if (outcome == "cached" || outcome == "stale") {
        cached += n;
    } else if (outcome == "forwarded") {
        forwarded += n;
    } else if (outcome == "local") {
        local += n;
    } else {
        errors += n;
    }
}

Counts& Counts::operator+=(const Counts& o) noexcept {
    queries += o.queries;
    blocked += o.blocked;
    cached += o.cached;
    forwarded += o.forwarded;
    local += o.local;
    errors += o.errors;
    return *this;
}

RollingStats::RollingStats() : ring_(kBuckets) {}

RollingStats::Bucket* RollingStats::bucket_for(std::int64_t time_us, bool live) {
    if (time_us < 0) {
        return nullptr;
    }
    const std::int64_t index = time_us / kBucketUs;
    if (newest_index_ >= 0 && index <= newest_index_ - static_cast<std::int64_t>(kBuckets)) {
        if (!live) {
            return nullptr;  // a rebuilt row older than the day the ring holds
        }
        // A query of now, a day or more before the newest bucket: the wall clock was set back
        // (or had run ahead). Without this the ring would drop every query until real time
        // caught up with the clock's mistake.
        newest_index_ = index;
    }
    Bucket& b = ring_[static_cast<std::size_t>(index) % kBuckets];
    if (b.index != index) {
        b = Bucket{};
        b.index = index;
    }
    newest_index_ = std::max(newest_index_, index);
    return &b;
}

bool RollingStats::live(const Bucket& b, std::int64_t now_us) const noexcept {
    const std::int64_t now_index = now_us / kBucketUs;
    return b.index >= 0 && b.index <= now_index &&
           b.index > now_index - static_cast<std::int64_t>(kBuckets);
}

void RollingStats::add(const Entry& entry) {
    add(entry.time_us, entry.outcome, entry.qname.view(), entry.client.to_text(), 1, true);
}

void RollingStats::count(const Entry& entry) { add(entry.time_us, entry.outcome, {}, {}, 1, true); }

void RollingStats::add(std::int64_t time_us, std::string_view outcome, std::string_view domain,
                       std::string_view client, std::uint64_t n) {
    add(time_us, outcome, domain, client, n, false);
}

void RollingStats::add(std::int64_t time_us, std::string_view outcome, std::string_view domain,
                       std::string_view client, std::uint64_t n, bool live) {
    const std::lock_guard lock(mutex_);
    Bucket* b = bucket_for(time_us, live);
    if (b == nullptr) {
        return;
    }
    Bucket*& fed = live ? fed_live_ : fed_rebuilt_;
    if (b != fed) {
        if (fed != nullptr && fed != (live ? fed_rebuilt_ : fed_live_)) {
            fed->release_heaps();
        }
        fed = b;
    }
    b->counts.add(outcome, n);
    if (!domain.empty()) {
        b->domains.add(domain, n);
        if (outcome == "blocked") {
            b->blocked.add(domain, n);
        }
    }
    if (!client.empty()) {
        b->clients.add(client, n);
    }
}

Counts RollingStats::totals(std::int64_t now_us) const {
    const std::lock_guard lock(mutex_);
    Counts out;
    for (const Bucket& b : ring_) {
        if (live(b, now_us)) {
            out += b.counts;
        }
    }
    return out;
}

std::vector<BucketCounts> RollingStats::history(std::int64_t now_us) const {
    const std::lock_guard lock(mutex_);
    const std::int64_t now_index = now_us / kBucketUs;
    std::vector<BucketCounts> out;
    out.reserve(kBuckets);
    for (std::int64_t index = now_index - static_cast<std::int64_t>(kBuckets) + 1;
         index <= now_index; ++index) {
        BucketCounts bc{index * kBucketUs, {}};
        if (index >= 0) {
            const Bucket& b = ring_[static_cast<std::size_t>(index) % kBuckets];
            if (b.index == index) {
                bc.counts = b.counts;
            }
        }
        out.push_back(bc);
    }
    return out;
}

namespace {

std::vector<Ranked> ranked(const std::unordered_map<std::string, std::uint64_t>& merged,
                           std::size_t count) {
    std::vector<Ranked> out;
    out.reserve(merged.size());
    for (const auto& [name, n] : merged) {
        out.push_back({name, n});
    }
    const auto heavier = [](const Ranked& a, const Ranked& b) {
        return a.count != b.count ? a.count > b.count : a.name < b.name;
    };
    const std::size_t keep = std::min(count, out.size());
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                      heavier);
    out.resize(keep);
    return out;
}

}  // namespace

RollingStats::Top RollingStats::top(std::int64_t now_us, std::size_t count) const {
    std::unordered_map<std::string, std::uint64_t> domains;
    std::unordered_map<std::string, std::uint64_t> blocked;
    std::unordered_map<std::string, std::uint64_t> clients;
    {
        const std::lock_guard lock(mutex_);
        for (const Bucket& b : ring_) {
            if (!live(b, now_us)) {
                continue;
            }
            b.domains.for_each([&](const std::string& k, std::uint64_t n) { domains[k] += n; });
            b.blocked.for_each([&](const std::string& k, std::uint64_t n) { blocked[k] += n; });
            b.clients.for_each([&](const std::string& k, std::uint64_t n) { clients[k] += n; });
        }
    }
    Top out;
    out.distinct_clients = clients.size();
    out.domains = ranked(domains, count);
    out.blocked = ranked(blocked, count);
    out.clients = ranked(clients, count);
    return out;
}

}  // namespace moat::querylog
