#include "entry_recycler.hpp"

#include <new>

namespace moat::cache {

EntryRecycler::~EntryRecycler() { release_all(); }

void* EntryRecycler::take(std::size_t block_size) {
    if (block_size <= kLargestClass) {
        Parked*& head = heads_[class_of(block_size)];
        if (head != nullptr) {
            Parked* const block = head;
            head = block->next;
            parked_bytes_ -= block_size;
            block->~Parked();
            return block;
        }
    }
    return ::operator new(block_size);
}

void EntryRecycler::give(void* block, std::size_t block_size) noexcept {
    if (block_size > kLargestClass || parked_bytes_ + block_size > parked_limit_) {
        ::operator delete(block);
        return;
    }
    Parked*& head = heads_[class_of(block_size)];
    head = new (block) Parked{head};
    parked_bytes_ += block_size;
}

void EntryRecycler::release_all() noexcept {
    for (Parked*& head : heads_) {
        while (head != nullptr) {
            Parked* const block = head;
            head = block->next;
            block->~Parked();
            ::operator delete(block);
        }
    }
    parked_bytes_ = 0;
}

}  // namespace moat::cache
