// A growable array of plain values in its own anonymous memory mapping: the columns of the
// filter's large tables, from the first rule a list gives to the finished snapshot.
//
// The array reserves address space well past what it holds (64 MiB, or four times its size) and
// grows within it in place, making the next pages usable (mprotect) without moving any: on a
// virtual machine, a page moved to another address (mremap) costs a fault on its next write, as
// a fresh page does (about 4-6 us), so growing by moving would pay for every value again. Only an
// array that outgrows its reservation moves, into a larger one. Address space is cheap and not
// memory: a reservation is neither written nor counted against the kernel's commit limit until
// made usable, and usable pages cost memory only where written. The pages are populated a chunk
// ahead of the writes: populating 16 KiB of pages in one call costs a tenth of faulting them one
// by one. (16, not more: a parallel load fills a set of columns per thread, each populated
// ahead, and that counts in its peak.)
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
/// Reserves `bytes` (whole pages) of address space, not usable until commit(). Throws
/// std::bad_alloc.
[[nodiscard]] void* reserve(std::size_t bytes);
/// Makes [at, at + bytes) of a reservation usable: zeroed, not yet populated. Throws
/// std::bad_alloc (nothing changed).
void commit(void* at, std::size_t bytes);
void unmap(void* at, std::size_t bytes) noexcept;
/// Moves the pages [from, from + bytes) to [to, to + bytes), replacing what was mapped there;
/// `from` is unmapped. Both page-aligned, `bytes` whole pages. No data is copied: the kernel
/// moves page table entries; when the range is several of its mappings (an array that absorbed
/// another), which it cannot move at once, it is copied. Throws std::bad_alloc (nothing moved).
void relocate(void* from, std::size_t bytes, void* to);
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
          mapped_(std::exchange(other.mapped_, 0)),
          reserved_(std::exchange(other.reserved_, 0)) {}
    MappedArray& operator=(MappedArray&& other) noexcept {
        if (this != &other) {
            MappedArray gone(std::move(*this));
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
            ready_ = std::exchange(other.ready_, 0);
            mapped_ = std::exchange(other.mapped_, 0);
            reserved_ = std::exchange(other.reserved_, 0);
        }
        return *this;
    }
    ~MappedArray() {
        if (data_ != nullptr) {
            mapping::unmap(data_, reserved_);
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
    /// Bytes of address space held: the array grows in place up to this.
    [[nodiscard]] std::size_t reserved_bytes() const noexcept { return reserved_; }

    /// Makes room for `count` values in all, mapping more without populating it. Throws
    /// std::bad_alloc when the mapping cannot grow; the array is then unchanged.
    void reserve(std::size_t count) {
        const std::size_t wanted = mapping::whole_pages(count * sizeof(T));
        if (wanted > mapped_) {
            grow_to(std::max(std::bit_ceil(wanted), kChunkBytes));
        }
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
        mapping::relocate(other.data_, moved, data_ + size_);
        if (moved < other.reserved_) {
            mapping::unmap(other.data_ + moved / sizeof(T), other.reserved_ - moved);
        }
        size_ += other.size_;
        ready_ = size_;
        other.forget();  // its mapping is gone: moved here, or unmapped
    }

    /// Keeps the first `count` values (count <= size()).
    void truncate(std::size_t count) noexcept { size_ = std::min(size_, count); }

    /// Gives back the pages past the values but `slack` bytes (a reader of whole words past the
    /// last value), and the address space reserved past them. It never grows the mapping:
    /// reserve_one() first makes room after the last value.
    void shrink_to_fit(std::size_t slack = 0) noexcept {
        const std::size_t wanted =
            std::min(mapping::whole_pages(size_ * sizeof(T) + slack), mapped_);
        if (wanted == 0) {
            MappedArray gone(std::move(*this));
            return;
        }
        // Unmapping the tail, not mremap: after an absorb() the array spans several of the
        // kernel's mappings, which mremap cannot resize at once.
        if (wanted < reserved_) {
            mapping::unmap(data_ + wanted / sizeof(T), reserved_ - wanted);
        }
        mapped_ = reserved_ = wanted;
        ready_ = std::min(ready_, mapped_ / sizeof(T));
    }

    /// Hands the mapping over, without the address space reserved past it: its address and
    /// size in bytes. The array is empty afterwards.
    [[nodiscard]] std::pair<T*, std::size_t> release() noexcept {
        if (mapped_ < reserved_) {
            mapping::unmap(data_ + mapped_ / sizeof(T), reserved_ - mapped_);
        }
        size_ = 0;
        ready_ = 0;
        reserved_ = 0;
        return {std::exchange(data_, nullptr), std::exchange(mapped_, 0)};
    }

private:
    static constexpr std::size_t kChunkBytes = std::size_t{16} * 1024;
    /// Address space reserved at least: a column of 8-byte keys for 8,000,000 rules.
    static constexpr std::size_t kReservedBytes = std::size_t{64} << 20U;

    /// Grows the mapping when every mapped value is in use, then populates the next chunk.
    void make_room() {
        if (ready_ * sizeof(T) == mapped_) {
            grow_to(mapped_ == 0 ? kChunkBytes : 2 * mapped_);
        }
        const std::size_t next = std::min(mapped_ / sizeof(T), ready_ + kChunkBytes / sizeof(T));
        mapping::populate(data_ + ready_, (next - ready_) * sizeof(T));
        ready_ = next;
    }

    /// Empties the array without unmapping anything: its mapping is someone else's now.
    void forget() noexcept {
        data_ = nullptr;
        size_ = ready_ = mapped_ = reserved_ = 0;
    }

    /// Makes `bytes` (whole pages, more than mapped_) usable: in place while the reservation
    /// lasts, else in a new reservation four times as large, the pages moved there.
    void grow_to(std::size_t bytes) {
        if (bytes <= reserved_) {
            mapping::commit(data_ + mapped_ / sizeof(T), bytes - mapped_);
            mapped_ = bytes;
            return;
        }
        const std::size_t room = std::max(kReservedBytes, 4 * bytes);
        void* const fresh = mapping::reserve(room);
        try {
            mapping::commit(fresh, bytes);
            if (data_ != nullptr) {
                mapping::relocate(data_, mapped_, fresh);
            }
        } catch (...) {
            mapping::unmap(fresh, room);
            throw;
        }
        if (data_ != nullptr && mapped_ < reserved_) {
            mapping::unmap(data_ + mapped_ / sizeof(T), reserved_ - mapped_);
        }
        data_ = static_cast<T*>(fresh);
        mapped_ = bytes;
        reserved_ = room;
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t ready_ = 0;     ///< values the populated pages hold
    std::size_t mapped_ = 0;    ///< bytes usable
    std::size_t reserved_ = 0;  ///< bytes of address space, mapped_ or more
};

}  // namespace moat::filter
