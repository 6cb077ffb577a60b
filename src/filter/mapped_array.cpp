#include "moat/filter/mapped_array.hpp"

#include <sys/mman.h>
#include <unistd.h>

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
    if (moved == MAP_FAILED) {
        throw std::bad_alloc();
    }
    return moved;
}

void unmap(void* at, std::size_t bytes) noexcept { ::munmap(at, bytes); }

void populate(void* at, std::size_t bytes) noexcept {
    prefault(static_cast<std::uint8_t*>(at), bytes);
}

std::size_t whole_pages(std::size_t bytes) noexcept {
    // The kernel's page: 4 KiB on x86-64, 16 KiB on a Raspberry Pi 5's kernel.
    static const auto kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (bytes + kPage - 1) / kPage * kPage;
}

}  // namespace moat::filter::mapping
