#include "moat/filter/mapped_array.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "page_advice.hpp"

namespace moat::filter::mapping {

void* map(std::size_t bytes) {
    void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) {
        throw std::bad_alloc();
    }
    return at;
}

void* remap(void* at, std::size_t old_bytes, std::size_t new_bytes) {
    void* moved = ::mremap(at, old_bytes, new_bytes, MREMAP_MAYMOVE);
    if (moved != MAP_FAILED) {
        return moved;
    }
    if (errno != EFAULT) {
        throw std::bad_alloc();
    }
    // EFAULT: the range is several mappings (move_pages() put another array's pages at its
    // end), and mremap resizes one. Rare: a merged table is built, not grown, and absorb()
    // leaves room for build()'s last word.
    void* copy = map(new_bytes);
    std::memcpy(copy, at, old_bytes);
    unmap(at, old_bytes);
    return copy;
}

void unmap(void* at, std::size_t bytes) noexcept { ::munmap(at, bytes); }

void move_pages(void* from, std::size_t bytes, void* to) {
    if (::mremap(from, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, to) == MAP_FAILED) {
        throw std::bad_alloc();
    }
}

void populate(void* at, std::size_t bytes) noexcept {
    prefault(static_cast<std::uint8_t*>(at), bytes);
}

std::size_t page_size() noexcept {
    static const auto kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return kPage;
}

std::size_t whole_pages(std::size_t bytes) noexcept {
    const std::size_t page = page_size();
    return (bytes + page - 1) / page * page;
}

}  // namespace moat::filter::mapping
