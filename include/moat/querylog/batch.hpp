// Log entries waiting to be written, held compactly: the fixed fields of each entry, and its
// texts (name, upstream, list, pattern) back to back in one shared buffer. About 100 bytes an
// entry instead of an Entry's 560, so the writer can gather a minute of a busy network's
// queries (a few thousand) into one transaction, which is what spares an SD card (few large
// writes instead of many small ones). Owned by the writer's thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "moat/querylog/entry.hpp"

namespace moat::querylog {

class Batch {
public:
    struct Item : EntryFields {
        std::uint32_t text;  ///< where this item's texts start in texts_
    };

    void add(const Entry& e);
    [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
    [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
    [[nodiscard]] const Item& operator[](std::size_t i) const noexcept { return items_[i]; }
    /// Text `which` of `item`: 0 name, 1 upstream, 2 list, 3 pattern.
    [[nodiscard]] std::string_view text(const Item& item, int which) const noexcept;
    /// Empties the batch and gives back its memory when it had grown large.
    void clear();
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        return items_.capacity() * sizeof(Item) + texts_.capacity();
    }

private:
    std::vector<Item> items_;
    std::string texts_;
};

}  // namespace moat::querylog
