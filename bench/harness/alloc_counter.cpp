#include "alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_allocations{0};

void* allocate(std::size_t size, std::size_t align) noexcept {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (size == 0) {
        size = 1;
    }
    if (align <= alignof(std::max_align_t)) {
        return std::malloc(size);
    }
    return std::aligned_alloc(align, (size + align - 1) / align * align);
}

void* allocate_or_throw(std::size_t size, std::size_t align) {
    void* p = allocate(size, align);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

// Out of line: inlined, GCC sees free() of what operator new returned and warns
// (-Wmismatched-new-delete), although both sides are these replacements.
[[gnu::noinline]] void release(void* p) noexcept { std::free(p); }

}  // namespace

namespace moat::bench {

AllocationCounter::AllocationCounter() noexcept {
    g_allocations.store(0);
    g_counting.store(true);
}

AllocationCounter::~AllocationCounter() { g_counting.store(false); }

std::size_t AllocationCounter::stop() noexcept {
    g_counting.store(false);
    return g_allocations.load();
}

}  // namespace moat::bench

// Every replaceable form, so no allocation escapes the count.
// NOLINTBEGIN(misc-new-delete-overloads)
void* operator new(std::size_t size) { return allocate_or_throw(size, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) {
    return allocate_or_throw(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align) {
    return allocate_or_throw(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
    return allocate_or_throw(size, static_cast<std::size_t>(align));
}
void* operator new(std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
    return allocate(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
    return allocate(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t& /*tag*/) noexcept {
    return allocate(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t& /*tag*/) noexcept {
    return allocate(size, static_cast<std::size_t>(align));
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
