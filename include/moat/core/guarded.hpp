// Data that is reachable only through its lock, so who may touch it is visible in the type.
//
//   Guarded<Stats> stats;                       // std::mutex
//   stats.with([](Stats& s) { ++s.hits; });
//
//   Guarded<Table, std::shared_mutex> table;    // the RwLock of the design card
//   table.with_shared([&](const Table& t) { return t.find(key); });   // readers in parallel
//   table.with([&](Table& t) { t.insert(key, value); });             // one writer
//
// The callable runs with the lock held; it must not let a reference to the data escape.
#pragma once

#include <mutex>
#include <shared_mutex>
#include <type_traits>
#include <utility>

namespace moat {

template <typename T, typename Mutex = std::mutex>
class Guarded {
public:
    Guarded() = default;
    template <typename... Args>
    explicit Guarded(std::in_place_t /*tag*/, Args&&... args)
        : value_(std::forward<Args>(args)...) {}

    Guarded(const Guarded&) = delete;
    Guarded& operator=(const Guarded&) = delete;

    /// Runs `fn(T&)` under the exclusive lock and returns its result.
    template <typename Fn>
    decltype(auto) with(Fn&& fn) {
        const std::unique_lock lock(mutex_);
        return std::forward<Fn>(fn)(value_);
    }

    /// Runs `fn(const T&)` under the shared lock (readers do not wait for each other).
    template <typename Fn>
    requires std::is_same_v<Mutex, std::shared_mutex>
    decltype(auto) with_shared(Fn&& fn) const {
        const std::shared_lock lock(mutex_);
        return std::forward<Fn>(fn)(std::as_const(value_));
    }

private:
    mutable Mutex mutex_;
    T value_{};
};

}  // namespace moat
