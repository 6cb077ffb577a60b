// The blocks of entries the cache let go, kept for the entries it stores next.
//
// A full cache evicts an entry for nearly every one it stores, so a stream of misses would
// otherwise free one block and allocate another per query. With a thousand queries in flight
// glibc's per-thread cache of freed blocks (7 per size by default) overflows and `malloc` takes
// its slow path. Blocks are rounded up to size classes so that answers of nearly the same size
// share one, and parked on an intrusive list per class; the parked bytes are capped, so a
// shift in answer sizes cannot strand memory. Not thread-safe: its shard's exclusive lock
// guards it.
#pragma once

#include <array>
#include <cstddef>

namespace moat::cache {

class EntryRecycler {
public:
    /// Octets between two size classes.
    static constexpr std::size_t kClassStep = 32;
    /// Blocks larger than this are neither rounded nor kept: answers that large are rare.
    static constexpr std::size_t kLargestClass = 2048;

    /// Keeps at most `parked_limit` octets of blocks.
    explicit EntryRecycler(std::size_t parked_limit) noexcept : parked_limit_(parked_limit) {}
    ~EntryRecycler();
    EntryRecycler(const EntryRecycler&) = delete;
    EntryRecycler& operator=(const EntryRecycler&) = delete;
    EntryRecycler(EntryRecycler&&) = delete;
    EntryRecycler& operator=(EntryRecycler&&) = delete;

    /// The size of the block that holds `octets`: its class's, or `octets` above the largest.
    [[nodiscard]] static constexpr std::size_t block_size(std::size_t octets) noexcept {
        return octets > kLargestClass ? octets
                                      : (octets + kClassStep - 1) / kClassStep * kClassStep;
    }

    /// A block of `block_size` octets (a value block_size() returned): a parked one if its
    /// class has one, else a new one from operator new (which may throw std::bad_alloc).
    [[nodiscard]] void* take(std::size_t block_size);
    /// Parks `block`, of `block_size` octets and from take(), or frees it when that would pass
    /// the limit or it is too large to keep. Whatever lived in it must be destroyed already.
    void give(void* block, std::size_t block_size) noexcept;
    /// Frees every parked block.
    void release_all() noexcept;

    [[nodiscard]] std::size_t parked_bytes() const noexcept { return parked_bytes_; }

private:
    static constexpr std::size_t kClasses = kLargestClass / kClassStep;

    /// A parked block's first octets link it to the next one of its class.
    struct Parked {
        Parked* next;
    };

    static std::size_t class_of(std::size_t block_size) noexcept {
        return block_size / kClassStep - 1;
    }

    std::size_t parked_limit_;
    std::size_t parked_bytes_ = 0;
    std::array<Parked*, kClasses> heads_{};
};

}  // namespace moat::cache
