#include "size_class_pool.hpp"

#include <algorithm>
#include <new>

namespace moat::upstream {

namespace {
// Chunks double from 4 KiB up to this, so a pool that serves a few queries stays small and a
// busy one asks the heap rarely.
constexpr std::size_t kLargestChunk = std::size_t{64} * 1024;
}  // namespace

SizeClassPool::~SizeClassPool() {
    while (chunks_ != nullptr) {
        Chunk* chunk = chunks_;
        chunks_ = chunk->next;
        upstream_->deallocate(chunk, chunk->size, alignof(Chunk));
    }
}

void* SizeClassPool::do_allocate(std::size_t bytes, std::size_t alignment) {
    if (!pooled(bytes, alignment)) {
        return upstream_->allocate(bytes, alignment);
    }
    const std::size_t cls = class_of(bytes);
    if (FreeBlock* block = free_[cls]; block != nullptr) {
        free_[cls] = block->next;
        return block;
    }
    return cut((cls + 1) * kGranule);
}

void SizeClassPool::do_deallocate(void* block, std::size_t bytes, std::size_t alignment) {
    if (!pooled(bytes, alignment)) {
        upstream_->deallocate(block, bytes, alignment);
        return;
    }
    const std::size_t cls = class_of(bytes);
    free_[cls] = ::new (block) FreeBlock{free_[cls]};
}

void* SizeClassPool::cut(std::size_t size) {
    if (static_cast<std::size_t>(end_ - cursor_) < size) {
        // The old chunk's rest (less than one block of this class) stays unused.
        const std::size_t chunk_size = std::max(next_chunk_size_, sizeof(Chunk) + size);
        auto* chunk = static_cast<Chunk*>(upstream_->allocate(chunk_size, alignof(Chunk)));
        chunks_ = ::new (chunk) Chunk{chunks_, chunk_size};
        cursor_ = reinterpret_cast<std::byte*>(chunk) + sizeof(Chunk);
        end_ = reinterpret_cast<std::byte*>(chunk) + chunk_size;
        next_chunk_size_ = std::min(next_chunk_size_ * 2, kLargestChunk);
    }
    void* block = cursor_;
    cursor_ += size;
    return block;
}

}  // namespace moat::upstream
