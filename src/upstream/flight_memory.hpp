// Where the memory of queries in flight comes from: a pool owned by the event loop's thread,
// not the general heap.
//
// Why: a forwarded query used to make about a dozen heap allocations (the flight, its key and
// query, the server order, the attempt and its copy of the query, the ID map's node, the timers'
// handlers), freed when the answer is in. With a thousand queries in flight they are freed in
// bursts, glibc's per-thread cache of freed blocks (7 per size) overflows, and `malloc` falls back
// to its slow path: a miss cost 9.5 µs of user time with glibc's defaults against 4.8 with
// `glibc.malloc.tcache_count=2000` (bench/forward_cost.py, docs/benchmarks.md). A pool keeps
// every freed block for the next query, whatever the environment the daemon was started in.
//
// The pool (size_class_pool.hpp) is unsynchronised: only the thread that runs the Forwarder's
// event loop touches it. It keeps the blocks of its busiest moment (bounded by max_in_flight)
// until it is destroyed.
//
// Under AddressSanitizer there is no pool: a block the pool kept for the next query would hide a
// use after free of the last one from the sanitizer, which sees only the pool's large chunks.
// Every block then comes from, and goes back to, the sanitizer's own heap.
#pragma once

#include <cstddef>
#include <memory>
#include <memory_resource>

#include "size_class_pool.hpp"

namespace moat::upstream {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kFlightMemoryPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kFlightMemoryPooled = false;
#else
inline constexpr bool kFlightMemoryPooled = true;
#endif
#else
inline constexpr bool kFlightMemoryPooled = true;
#endif

using FlightMemory = std::pmr::memory_resource;

/// A new pool, or under AddressSanitizer the plain heap (see above).
inline std::shared_ptr<FlightMemory> make_flight_memory() {
    if constexpr (kFlightMemoryPooled) {
        return std::make_shared<SizeClassPool>();
    } else {
        // Not owned: the heap's resource lives as long as the program.
        return {std::shared_ptr<void>(), std::pmr::new_delete_resource()};
    }
}

/// An allocator that keeps the pool alive while anything it allocated is: a shared_ptr's control
/// block made with std::allocate_shared holds a copy, so the pool outlives the last flight even
/// when a handler queued on the event loop holds that flight after the Forwarder is gone.
template <typename T>
class SharedPoolAllocator {
public:
    using value_type = T;

    explicit SharedPoolAllocator(std::shared_ptr<FlightMemory> pool) noexcept
        : pool_(std::move(pool)) {}
    template <typename U>  // implicit, as the allocator requirements ask for a rebound copy
    SharedPoolAllocator(const SharedPoolAllocator<U>& other) noexcept  // NOLINT(*-explicit-*)
        : pool_(other.pool()) {}

    T* allocate(std::size_t n) {
        return static_cast<T*>(pool_->allocate(n * sizeof(T), alignof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        pool_->deallocate(p, n * sizeof(T), alignof(T));
    }

    [[nodiscard]] const std::shared_ptr<FlightMemory>& pool() const noexcept { return pool_; }

    template <typename U>
    bool operator==(const SharedPoolAllocator<U>& other) const noexcept {
        return pool_ == other.pool();
    }

private:
    std::shared_ptr<FlightMemory> pool_;
};

/// For what a flight's own members and its Asio handlers allocate: a plain pointer to the pool,
/// which the flight keeps alive (every handler bound with it holds the flight).
using FlightAllocator = std::pmr::polymorphic_allocator<std::byte>;

}  // namespace moat::upstream
