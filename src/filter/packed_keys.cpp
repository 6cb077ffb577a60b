#include "moat/filter/packed_keys.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

#include "moat/filter/mapped_array.hpp"
#include "page_advice.hpp"

namespace moat::filter {
namespace {

/// Bytes to map for `count` keys of `width` bytes: the last key is read as a whole 8-byte word.
std::size_t bytes_for(std::size_t count, unsigned width) noexcept {
    return mapping::whole_pages(count * width + sizeof(std::uint64_t));
}

}  // namespace

PackedKeys::PackedKeys(PackedKeys&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      mapped_(std::exchange(other.mapped_, 0)),
      width_(other.width_),
      bits_(other.bits_),
      drop_(other.drop_),
      mask_(other.mask_) {}

PackedKeys& PackedKeys::operator=(PackedKeys&& other) noexcept {
    if (this != &other) {
        PackedKeys gone(std::move(*this));
        data_ = std::exchange(other.data_, nullptr);
        mapped_ = std::exchange(other.mapped_, 0);
        width_ = other.width_;
        bits_ = other.bits_;
        drop_ = other.drop_;
        mask_ = other.mask_;
    }
    return *this;
}

PackedKeys::~PackedKeys() {
    if (data_ != nullptr) {
        ::munmap(data_, mapped_);
    }
}

void PackedKeys::next_chunk(std::size_t written, std::size_t read, std::size_t ahead) noexcept {
    const std::size_t output_end = std::min(written + ahead, mapped_);
    prefault(data_ + written, output_end - written);
    if (read > output_end) {
        release(data_ + output_end, read - output_end);
    }
}

void PackedKeys::finish_packing(std::size_t count, unsigned bits, unsigned width) noexcept {
    width_ = width;
    bits_ = bits;
    drop_ = 64 - 8 * width;
    mask_ = width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
    const std::size_t needed = bytes_for(count, width);
    if (needed < mapped_) {
        ::munmap(data_ + needed, mapped_ - needed);
        mapped_ = needed;
    }
}

}  // namespace moat::filter
