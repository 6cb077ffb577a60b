// Advice to the kernel about the pages of the filter's large tables, while they are built: map
// them in bulk before writing, give back those no longer needed, and move the finished ones onto
// huge pages. All best effort: a kernel that refuses only costs speed.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#include "moat/filter/mapped_array.hpp"

namespace moat::filter {

/// The whole `page`-sized pages inside [begin, begin + count): [first, last), empty when none.
/// madvise() takes only the kernel's own pages: 16 KiB on a Raspberry Pi 5's kernel, where a
/// range cut to 4 KiB would be refused whole.
struct PageRange {
    std::uintptr_t first = 0;
    std::uintptr_t last = 0;
};
template <typename T>
inline PageRange pages_within(T* begin, std::size_t count, std::uintptr_t page) noexcept {
    return {(reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1),
            reinterpret_cast<std::uintptr_t>(begin + count) & ~(page - 1)};
}

/// Maps the pages of [begin, begin + count) in one system call before they are written. A page
/// fault costs about 10 us on a KVM guest (40 ms for the 14 MB of a 1,000,000-rule table),
/// more than the whole sort; asking for the pages in bulk costs a tenth. Best effort: kernels
/// before 5.14 fall back to faulting page by page.
template <typename T>
inline void prefault(T* begin, std::size_t count) noexcept {
#ifdef MADV_POPULATE_WRITE
    const PageRange r = pages_within(begin, count, mapping::page_size());
    if (r.last > r.first) {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page address
        (void)::madvise(reinterpret_cast<void*>(r.first), r.last - r.first, MADV_POPULATE_WRITE);
    }
#else
    (void)begin;
    (void)count;
#endif
}

/// MADV_COLLAPSE (Linux 6.1): glibc 2.36's <sys/mman.h> does not name it yet.
inline constexpr int kAdviseCollapse = 25;

/// Moves the finished [begin, begin + count) onto transparent huge pages. A lookup touches two
/// random places in tables of many megabytes; with 4 KiB pages each is also a TLB miss, which on
/// a virtual machine (two-level page walk) costs as much as the memory read itself.
///
/// Called only once the table is complete: a table advised before it is written gets 2 MiB
/// pages as the writing reaches them, each up to 2 MiB ahead of the data, while the builder's
/// blocks still hold the same entries, and that rounding (0.7 MiB at 1,000,000 rules) put a
/// rebuild's peak above one snapshot. Collapsing afterwards copies each 2 MiB of small pages
/// into a huge page in place; the resident size does not grow. Only the 2 MiB-aligned interior
/// can be huge; best effort (THP may be off, or the kernel older than 6.1, when khugepaged may
/// still collapse the advised range later).
template <typename T>
inline void move_to_huge_pages(T* begin, std::size_t count) noexcept {
#ifdef MADV_HUGEPAGE
    const PageRange r = pages_within(begin, count, std::uintptr_t{2} << 20U);
    if (r.last > r.first) {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page address
        auto* const first = reinterpret_cast<void*>(r.first);
        (void)::madvise(first, r.last - r.first, MADV_HUGEPAGE);
        (void)::madvise(first, r.last - r.first, kAdviseCollapse);
    }
#else
    (void)begin;
    (void)count;
#endif
}

/// Gives back the whole pages inside [begin, begin + count): their contents are no longer
/// needed, and the next write there finds a zeroed page.
template <typename T>
inline void release(T* begin, std::size_t count) noexcept {
    const PageRange r = pages_within(begin, count, mapping::page_size());
    if (r.last > r.first) {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page address
        (void)::madvise(reinterpret_cast<void*>(r.first), r.last - r.first, MADV_DONTNEED);
    }
}

}  // namespace moat::filter
