// The sorted 64-bit keys of a NameHashSet, each stored in as few whole bytes as the directory
// leaves to tell them apart. The directory already holds a key's top `bits` (every key in bucket
// b starts with b), so only the other 64 - bits need storing: at 1,000,000 rules the directory
// has 2^18 buckets and 46 bits fit in 6 bytes, not 8, which saves 2 MB and loses nothing: two
// keys in a bucket compare as their full 64 bits do.
//
// The storage is a mapping of its own: it is the builder's column of full 8-byte keys, taken
// over once they are sorted, and packing rewrites them front to back in the same pages, then
// returns the pages past the end. A separate packed array would have the set's peak briefly hold
// both.
//
// What is built beside the keys while they pack (the set's directory) is paid for with pages of
// keys already read: first those past the packed keys' end, which are never written again, and
// until the packing reaches them, a few below it, which the packing then maps again. Only as many
// as the directory has grown past a small slack: a page given back below the end costs a fresh
// page when the packing comes back to it (about 6 us on a virtual machine, more than packing its
// 680 keys), and each call to give pages back, in a process that has run threads, interrupts
// every core to flush its TLB.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace moat::filter {

class PackedKeys {
    static_assert(std::endian::native == std::endian::little, "keys are read as little-endian");

public:
    PackedKeys() = default;
    /// Takes over a mapping of `mapped` bytes (from mapping::map) that holds full keys, with at
    /// least 8 bytes past the last one.
    PackedKeys(std::uint64_t* keys, std::size_t mapped) noexcept
        : data_(reinterpret_cast<std::uint8_t*>(keys)), mapped_(mapped) {}
    PackedKeys(const PackedKeys&) = delete;
    PackedKeys& operator=(const PackedKeys&) = delete;
    PackedKeys(PackedKeys&& other) noexcept;
    PackedKeys& operator=(PackedKeys&& other) noexcept;
    ~PackedKeys();

    /// The full keys, before pack().
    [[nodiscard]] std::uint64_t* wide() noexcept {
        // The mapping is page-aligned, so the full keys are 8-byte aligned.
        return reinterpret_cast<std::uint64_t*>(data_);
    }

    /// Keeps the first `count` keys without their top `bits`, in the fewest whole bytes, and
    /// unmaps the pages no longer needed. `visit(i, key)` sees each full key before it goes;
    /// `built()` is the bytes of memory what the visits build holds so far, which the packing
    /// gives back as many pages of keys already read for, so memory does not grow.
    template <typename Visit, typename Built>
    void pack(std::size_t count, unsigned bits, Visit visit, Built built) noexcept {
        const unsigned width = width_for(bits);
        const std::uint64_t* keys = wide();
        const unsigned drop = 64 - 8 * width;
        PagesWhilePacking pages(data_, mapped_, bytes_for(count, width));
        for (std::size_t i = 0; i < count; ++i) {
            // Key i is read from bytes [8i, 8i + 8) before [width * i, width * (i + 1)) are
            // written, and those never reach a key not yet read.
            const std::uint64_t key = keys[i];
            visit(i, key);
            const std::uint64_t stored = (key << bits) >> drop;
            std::memcpy(data_ + i * width, &stored, width);
            if (i % kChunk == kChunk - 1) {
                pages.next_chunk(width * (i + 1), 8 * (i + 1), width * kChunk, built());
            }
        }
        finish_packing(count, bits, width);
    }

    /// A key in the form it is stored in: comparable with at().
    [[nodiscard]] std::uint64_t stored_form(std::uint64_t key) const noexcept {
        return (key << bits_) >> drop_;
    }
    /// The i-th stored key.
    [[nodiscard]] std::uint64_t at(std::size_t i) const noexcept {
        std::uint64_t word = 0;
        std::memcpy(&word, address(i), sizeof word);  // the mapping has 8 bytes of slack
        return word & mask_;
    }
    [[nodiscard]] const std::uint8_t* address(std::size_t i) const noexcept {
        return data_ + i * width_;
    }
    /// Bytes stored per key.
    [[nodiscard]] unsigned width() const noexcept { return width_; }
    /// Bytes mapped.
    [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_; }

private:
    /// Keys packed between two visits to the pages (64 KiB of full keys): the output mapped ahead
    /// and the directory growing beside it stay within a few pages of what is given back.
    static constexpr std::size_t kChunk = 8192;

    [[nodiscard]] static unsigned width_for(unsigned bits) noexcept { return (64 - bits + 7) / 8; }
    /// Bytes to map for `count` keys of `width` bytes: the last key is read as a whole word.
    [[nodiscard]] static std::size_t bytes_for(std::size_t count, unsigned width) noexcept;

    /// Which pages of the mapping are given back while pack() rewrites it (see the top).
    class PagesWhilePacking {
    public:
        /// `packed_end`: the whole pages the packed keys will need.
        PagesWhilePacking(std::uint8_t* data, std::size_t mapped, std::size_t packed_end) noexcept
            : data_(data), mapped_(mapped), packed_end_(packed_end), tail_end_(packed_end) {}
        /// Between two chunks: the packed keys end at byte `written`, the full keys before byte
        /// `read` are read, the next `ahead` bytes of output are to be written, and what is built
        /// beside the keys holds `built` bytes.
        void next_chunk(std::size_t written, std::size_t read, std::size_t ahead,
                        std::size_t built) noexcept;

    private:
        std::uint8_t* data_;
        std::size_t mapped_;
        std::size_t packed_end_;
        std::size_t tail_end_;        ///< [packed_end_, tail_end_) given back for good
        std::size_t hole_begin_ = 0;  ///< [hole_begin_, hole_end_) given back until the
        std::size_t hole_end_ = 0;    ///< packing reaches it
    };

    void finish_packing(std::size_t count, unsigned bits, unsigned width) noexcept;

    std::uint8_t* data_ = nullptr;
    std::size_t mapped_ = 0;
    unsigned width_ = 8;
    unsigned bits_ = 0;  ///< top bits dropped (the directory's)
    unsigned drop_ = 0;  ///< low bits dropped after that: always zeros
    std::uint64_t mask_ = ~std::uint64_t{0};
};

}  // namespace moat::filter
