// Counting replacements of every form of the global operator new/delete, for the tests that
// prove a path allocates nothing. Include it from exactly ONE source file of a test binary: it
// defines the replaceable global operators, which a program may define only once.
//
//   std::size_t n = 0;
//   {
//       const Counting counting;   // counts from here...
//       code_under_test();
//       n = Counting::stop();      // ...to here
//   }
//   EXPECT_EQ(n, 0U);
//
// Each test binary using it also runs a control that allocates on purpose
// (allocations_in_a_control()), so a counter that silently stopped counting fails a test instead
// of passing them all.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

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

/// What the counter sees of a deliberate allocation: the control each test binary runs, as
/// `EXPECT_GE(allocations_in_a_control(), 1U)`.
inline std::size_t allocations_in_a_control() {
    const Counting counting;
    const std::vector<int> control(16);
    return Counting::stop();
}

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
