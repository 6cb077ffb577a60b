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

void* reserve(std::size_t bytes) {
    void* at =
        ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) {
        throw std::bad_alloc();
    }
    return at;
}

void commit(void* at, std::size_t bytes) {
    if (::mprotect(at, bytes, PROT_READ | PROT_WRITE) != 0) {
        throw std::bad_alloc();
    }
}

void unmap(void* at, std::size_t bytes) noexcept { ::munmap(at, bytes); }

void relocate(void* from, std::size_t bytes, void* to) {
    if (::mremap(from, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED) {
        return;
    }
    if (errno != EFAULT) {
        throw std::bad_alloc();
    }
    // EFAULT: the range is several mappings (an array's own pages and those it absorbed), and
    // mremap moves one. Rare: a merged table is built, not grown past its reservation.
    std::memcpy(to, from, bytes);
    unmap(from, bytes);
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
