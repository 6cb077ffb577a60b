// A growable array of plain values in its own anonymous memory mapping: the columns of the
// filter's large tables, from the first rule a list gives to the finished snapshot.
//
// Growing remaps (mremap): the kernel moves page tables, not data, so the array never holds two
// copies of itself, where a std::vector doubling copies into a new block while the old one is
// still live. Address space is reserved by doubling but costs memory only where written, and the
// pages are populated a chunk ahead of the writes: a page fault costs about 10 us on a KVM guest,
// populating 16 KiB of pages in one call a tenth of that per page. (16, not more: a parallel
// load fills a set of columns per thread, each populated ahead, and that counts in its peak.)
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace moat::filter {

namespace mapping {
/// Maps `bytes` (whole pages) of zeroed, not yet populated memory. Throws std::bad_alloc.
[[nodiscard]] void* map(std::size_t bytes);
/// Grows a mapping, moving it when it cannot grow in place; the contents stay. A range that
/// move_pages() made of several mappings is copied into a new one. Throws std::bad_alloc (the
/// old mapping is then unchanged).
[[nodiscard]] void* remap(void* at, std::size_t old_bytes, std::size_t new_bytes);
void unmap(void* at, std::size_t bytes) noexcept;
/// Moves the pages [from, from + bytes) to [to, to + bytes), replacing what was mapped there;
/// `from` is unmapped. Both page-aligned, `bytes` whole pages. No data is copied: the kernel
/// moves page table entries. Throws std::bad_alloc (nothing moved).
void move_pages(void* from, std::size_t bytes, void* to);
/// Populates [at, at + bytes) for writing, whole pages; best effort.
void populate(void* at, std::size_t bytes) noexcept;
/// The kernel's page size: 4 KiB on x86-64, 16 KiB on a Raspberry Pi 5's kernel.
[[nodiscard]] std::size_t page_size() noexcept;
/// `bytes` rounded up to whole pages.
[[nodiscard]] std::size_t whole_pages(std::size_t bytes) noexcept;
}  // namespace mapping

template <typename T>
class MappedArray {
    static_assert(std::is_trivially_copyable_v<T> && 4096 % sizeof(T) == 0,
                  "values are copied as bytes and tile a page");

public:
    MappedArray() = default;
    MappedArray(const MappedArray&) = delete;
    MappedArray& operator=(const MappedArray&) = delete;
    MappedArray(MappedArray&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)),
          ready_(std::exchange(other.ready_, 0)),
          mapped_(std::exchange(other.mapped_, 0)) {}
    MappedArray& operator=(MappedArray&& other) noexcept {
        if (this != &other) {
            MappedArray gone(std::move(*this));
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
            ready_ = std::exchange(other.ready_, 0);
            mapped_ = std::exchange(other.mapped_, 0);
        }
        return *this;
    }
    ~MappedArray() {
        if (data_ != nullptr) {
            mapping::unmap(data_, mapped_);
        }
    }

    /// Makes room for one more value. Throws std::bad_alloc when the mapping cannot grow.
    void reserve_one() {
        if (size_ == ready_) {
            make_room();
        }
    }
    /// Appends a value there is room for (reserve_one()).
    void append(T value) noexcept { data_[size_++] = value; }
    /// Appends a value. Throws std::bad_alloc when the mapping cannot grow.
    void push_back(T value) {
        reserve_one();
        append(value);
    }

    [[nodiscard]] T& operator[](std::size_t i) noexcept { return data_[i]; }
    [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data_[i]; }
    [[nodiscard]] T* data() noexcept { return data_; }
    [[nodiscard]] const T* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// Bytes mapped: what the array can cost, at most.
    [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_; }

    /// Makes room for `count` values in all, mapping more without populating it. Throws
    /// std::bad_alloc when the mapping cannot grow; the array is then unchanged.
    void reserve(std::size_t count) {
        const std::size_t wanted = mapping::whole_pages(count * sizeof(T));
        if (wanted <= mapped_) {
            return;
        }
        const std::size_t bytes = std::max(std::bit_ceil(wanted), kChunkBytes);
        data_ = static_cast<T*>(data_ == nullptr ? mapping::map(bytes)
                                                 : mapping::remap(data_, mapped_, bytes));
        mapped_ = bytes;
    }

    /// Appends every value of `other` and empties it, without copying: `other`'s pages are
    /// moved to the end of this mapping. Requires this array's values to end on a page boundary
    /// (size() * sizeof(T) a multiple of mapping::page_size()), or this array to be empty, in
    /// which case it takes `other`'s mapping. Rules parsed on several threads merge into one
    /// table this way: a copy would need the source's pages given back as it goes, and in a
    /// process with several threads each such call makes the kernel interrupt every core.
    /// Throws std::bad_alloc when this mapping cannot grow; both arrays are then unchanged.
    void absorb(MappedArray&& other) {
        if (data_ == nullptr) {
            *this = std::move(other);
            return;
        }
        if (other.size_ == 0) {
            MappedArray gone(std::move(other));
            return;
        }
        assert(size_ * sizeof(T) % mapping::page_size() == 0);
        const std::size_t moved = mapping::whole_pages(other.size_ * sizeof(T));
        reserve(size_ + moved / sizeof(T));
        mapping::move_pages(other.data_, moved, data_ + size_);
        if (moved < other.mapped_) {
            mapping::unmap(other.data_ + moved / sizeof(T), other.mapped_ - moved);
        }
        size_ += other.size_;
        ready_ = size_;
        (void)other.release();  // its mapping is gone: moved here, or unmapped
    }

    /// Keeps the first `count` values (count <= size()).
    void truncate(std::size_t count) noexcept { size_ = std::min(size_, count); }

    /// Gives back the pages past the values but `slack` bytes (a reader of whole words past the
    /// last value). It never grows the mapping: reserve_one() first makes room after the last
    /// value.
    void shrink_to_fit(std::size_t slack = 0) noexcept {
        const std::size_t wanted = mapping::whole_pages(size_ * sizeof(T) + slack);
        if (wanted >= mapped_) {
            return;
        }
        if (wanted == 0) {
            MappedArray gone(std::move(*this));
            return;
        }
        // Unmapping the tail, not mremap: after an absorb() the array spans several of the
        // kernel's mappings, which mremap cannot resize at once.
        mapping::unmap(data_ + wanted / sizeof(T), mapped_ - wanted);
        mapped_ = wanted;
        ready_ = std::min(ready_, mapped_ / sizeof(T));
    }

    /// Hands the mapping over: its address and size in bytes. The array is empty afterwards.
    [[nodiscard]] std::pair<T*, std::size_t> release() noexcept {
        size_ = 0;
        ready_ = 0;
        return {std::exchange(data_, nullptr), std::exchange(mapped_, 0)};
    }

private:
    static constexpr std::size_t kChunkBytes = std::size_t{16} * 1024;

    /// Grows the mapping when every mapped value is in use, then populates the next chunk.
    void make_room() {
        if (ready_ * sizeof(T) == mapped_) {
            const std::size_t bytes = mapped_ == 0 ? kChunkBytes : 2 * mapped_;
            data_ = static_cast<T*>(data_ == nullptr ? mapping::map(bytes)
                                                     : mapping::remap(data_, mapped_, bytes));
            mapped_ = bytes;
        }
        const std::size_t next = std::min(mapped_ / sizeof(T), ready_ + kChunkBytes / sizeof(T));
        mapping::populate(data_ + ready_, (next - ready_) * sizeof(T));
        ready_ = next;
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t ready_ = 0;   ///< values the populated pages hold
    std::size_t mapped_ = 0;  ///< bytes
};

}  // namespace moat::filter
