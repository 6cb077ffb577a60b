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
    /// unmaps the pages no longer needed. `visit(i, key)` sees each full key before it goes.
    /// The pages behind the packed keys are given back as the packing passes them, so memory
    /// falls as it goes (what `visit` builds can grow in their place).
    template <typename Visit>
    void pack(std::size_t count, unsigned bits, Visit visit) noexcept {
        const unsigned width = width_for(bits);
        const std::uint64_t* keys = wide();
        const unsigned drop = 64 - 8 * width;
        for (std::size_t i = 0; i < count; ++i) {
            // Key i is read from bytes [8i, 8i + 8) before [width * i, width * (i + 1)) are
            // written, and those never reach a key not yet read.
            const std::uint64_t key = keys[i];
            visit(i, key);
            const std::uint64_t stored = (key << bits) >> drop;
            std::memcpy(data_ + i * width, &stored, width);
            if (i % kChunk == kChunk - 1) {
                next_chunk(width * (i + 1), 8 * (i + 1), width * kChunk);
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
    /// Between two chunks: the packed keys end at byte `written`, the full keys before byte
    /// `read` are read. Maps the next `ahead` bytes of output in bulk (pages given back earlier
    /// come back in one call, not one fault each) and gives back the pages past them up to
    /// `read`.
    void next_chunk(std::size_t written, std::size_t read, std::size_t ahead) noexcept;
    void finish_packing(std::size_t count, unsigned bits, unsigned width) noexcept;

    std::uint8_t* data_ = nullptr;
    std::size_t mapped_ = 0;
    unsigned width_ = 8;
    unsigned bits_ = 0;  ///< top bits dropped (the directory's)
    unsigned drop_ = 0;  ///< low bits dropped after that: always zeros
    std::uint64_t mask_ = ~std::uint64_t{0};
};

}  // namespace moat::filter
