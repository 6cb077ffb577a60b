// A cache hit allocates nothing. This binary replaces every form of the global operator
// new/delete with counting versions (the pattern of tests/unit/wire/alloc_test.cpp); counting is
// switched on only around the lookups, and a deliberately allocating control proves the counter
// is live.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/message_view.hpp"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_allocations{0};

void* counted_alloc(std::size_t size, std::size_t align) {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (size == 0) {
        size = 1;
    }
    void* p = nullptr;
    if (align <= alignof(std::max_align_t)) {
        p = std::malloc(size);
    } else {
        p = std::aligned_alloc(align, (size + align - 1) / align * align);
    }
    return p;
}

// Out of line on purpose: GCC otherwise sees free() applied to what operator new returned and
// warns (-Wmismatched-new-delete), although here both are ours and match.
[[gnu::noinline]] void release(void* p) noexcept { std::free(p); }

/// Counts allocations made while alive.
class Counting {
public:
    Counting() {
        g_allocations.store(0);
        g_counting.store(true);
    }
    ~Counting() { g_counting.store(false); }
    Counting(const Counting&) = delete;
    Counting& operator=(const Counting&) = delete;
    [[nodiscard]] static std::size_t stop() {
        g_counting.store(false);
        return g_allocations.load();
    }
};

}  // namespace

// NOLINTBEGIN(misc-new-delete-overloads): every replaceable form, on purpose.
void* operator new(std::size_t size) {
    void* p = counted_alloc(size, alignof(std::max_align_t));
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void* operator new(std::size_t size, std::align_val_t align) {
    void* p = counted_alloc(size, static_cast<std::size_t>(align));
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}
void* operator new[](std::size_t size, std::align_val_t align) {
    return ::operator new(size, align);
}
void* operator new(std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
    return counted_alloc(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
    return counted_alloc(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t& /*tag*/) noexcept {
    return counted_alloc(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t& /*tag*/) noexcept {
    return counted_alloc(size, static_cast<std::size_t>(align));
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t /*size*/) noexcept { release(p); }
void operator delete[](void* p, std::size_t /*size*/) noexcept { release(p); }
void operator delete(void* p, std::align_val_t /*align*/) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t /*align*/) noexcept { release(p); }
void operator delete(void* p, std::size_t /*size*/, std::align_val_t /*align*/) noexcept {
    release(p);
}
void operator delete[](void* p, std::size_t /*size*/, std::align_val_t /*align*/) noexcept {
    release(p);
}
void operator delete(void* p, const std::nothrow_t& /*tag*/) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t& /*tag*/) noexcept { release(p); }
void operator delete(void* p, std::align_val_t /*align*/, const std::nothrow_t& /*tag*/) noexcept {
    release(p);
}
void operator delete[](void* p, std::align_val_t /*align*/,
                       const std::nothrow_t& /*tag*/) noexcept {
    release(p);
}
// NOLINTEND(misc-new-delete-overloads)

namespace moat::cache {
namespace {

TEST(CacheAlloc, CounterIsLive) {
    std::size_t n = 0;
    {
        const Counting counting;
        const std::vector<int> control(16);
        n = Counting::stop();
    }
    EXPECT_GE(n, 1U);
}

TEST(CacheAlloc, HitsAndMissesAllocateNothing) {
    ManualClock clock;
    Options options;
    options.serve_stale = true;
    Cache cache(clock, options);
    test::AnswerSpec spec;
    spec.records.push_back(test::a_record("www.example.com", 60));
    spec.records.push_back(test::a_record("www.example.com", 60, 2));
    ASSERT_TRUE(cache.insert(test::key("www.example.com"), test::build(spec)));
    ASSERT_TRUE(cache.insert(test::key("old.example"), test::simple_answer("old.example", 1)));

    test::AnswerSpec query;
    query.qname = "WWW.example.com";
    query.response = false;
    const auto query_bytes = test::build(query);
    std::array<std::uint8_t, 1232> out{};
    const CacheKey old_key = test::key("old.example");
    const CacheKey missing_key = test::key("missing.example");
    clock.advance(std::chrono::seconds(2));

    std::size_t served = 0;
    {
        const Counting counting;
        for (int i = 0; i < 1000; ++i) {
            // The whole hot path: parse the query, make the key, look up.
            const auto view = wire::MessageView::parse(query_bytes);
            const auto key = CacheKey::from_query(*view);
            const auto hit = cache.lookup(*key, static_cast<std::uint16_t>(i), out);
            served += hit ? hit->size : 0;
            const auto stale = cache.lookup(old_key, 1, out, LookupMode::stale);
            served += stale ? stale->size : 0;
            const auto miss = cache.lookup(missing_key, 1, out);
            served += miss ? 1U : 0U;
        }
        EXPECT_EQ(Counting::stop(), 0U);
    }
    EXPECT_GT(served, 0U);
    EXPECT_EQ(cache.stats().hits, 1000U);
    EXPECT_EQ(cache.stats().stale_hits, 1000U);
    EXPECT_EQ(cache.stats().misses, 1000U);
}

}  // namespace
}  // namespace moat::cache
