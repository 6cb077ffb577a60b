#include "moat/filter/packed_keys.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

#include "moat/filter/mapped_array.hpp"
#include "page_advice.hpp"

namespace moat::filter {
namespace {

/// Keys already read and given back when the memory built beside them has grown past what was
/// given back by this much: a few calls to give pages back, each for many pages.
constexpr std::size_t kGrowthSlack = std::size_t{128} * 1024;

std::size_t round_down(std::size_t bytes, std::size_t page) noexcept { return bytes / page * page; }

}  // namespace

std::size_t PackedKeys::bytes_for(std::size_t count, unsigned width) noexcept {
    return mapping::whole_pages(count * width + sizeof(std::uint64_t));
}

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

void PackedKeys::PagesWhilePacking::next_chunk(std::size_t written, std::size_t read,
                                               std::size_t ahead, std::size_t built) noexcept {
    const std::size_t page = mapping::page_size();
    // Pages given back below the end come back in one call before the output reaches them,
    // not one fault each.
    const std::size_t output_end = std::min(mapping::whole_pages(written + ahead), mapped_);
    if (hole_begin_ < std::min(output_end, hole_end_)) {
        const std::size_t back = std::min(output_end, hole_end_);
        prefault(data_ + hole_begin_, back - hole_begin_);
        hole_begin_ = back;
    }
    const std::size_t read_end = round_down(read, page);
    const std::size_t hole = hole_end_ - hole_begin_;
    // Keys read past the packed end are never written again: given back a slack's worth at a
    // time.
    if (read_end >= tail_end_ + kGrowthSlack ||
        (read_end > tail_end_ && built > hole + (tail_end_ - packed_end_) + kGrowthSlack)) {
        release(data_ + tail_end_, read_end - tail_end_);
        tail_end_ = read_end;
    }
    const std::size_t given = hole + (tail_end_ - packed_end_);
    if (built <= given + kGrowthSlack) {
        return;
    }
    // Still short: keys read below the end, the highest first, which the output reaches last.
    const std::size_t top = std::min(read_end, packed_end_);
    const std::size_t wanted = mapping::whole_pages(built - given - kGrowthSlack / 2);
    if (hole_begin_ == hole_end_) {
        hole_begin_ = hole_end_ = std::max(output_end, top > wanted ? top - wanted : 0);
    }
    const std::size_t end = std::min(top, hole_end_ + wanted);
    if (end > hole_end_) {
        release(data_ + hole_end_, end - hole_end_);
        hole_end_ = end;
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
