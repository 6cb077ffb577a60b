// The name-compression memory of a message being built: a trie of the name suffixes already
// written, indexed by a hash of (parent node, label).
//
// Node 0 is the root name. Every other node is one label written in the output at `offset`,
// whose remaining labels are its parent's. Looking up a name walks its labels from the right,
// one hash probe per label; a probe's candidate is confirmed by comparing the label against the
// output bytes case-insensitively, so the table stores no label text. Fixed capacity, no
// allocation: when full, later names are simply not remembered (they are still written
// correctly, just less compressed). Nodes are only ever removed newest-first (rollback of a
// record that did not fit), which restores the linear-probing table exactly.
//
// The hash index is built only when a message has written more than kLinearNodes labels: until
// then a lookup scans the nodes (a short run of 8-octet entries), so a new table costs no
// clearing of the index's 4 KiB. Most answers (one question, a few records) never build it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace moat::wire {

class CompressionTable {
public:
    static constexpr std::size_t kMaxNodes = 1024;
    static constexpr std::size_t kSlots = 2048;  ///< power of two, at most half full
    static constexpr std::uint16_t kRoot = 0;
    /// Nodes found by scanning before the hash index is built.
    static constexpr std::size_t kLinearNodes = 16;

    CompressionTable() noexcept { reset(); }

    /// Forgets every name. Costs one write per node used, not per slot.
    void reset() noexcept;

    /// The child of `parent` whose label equals (ignoring ASCII case) the label at `label`
    /// (length octet first), or kRoot when there is none. `out` is the message being built.
    [[nodiscard]] std::uint16_t find(std::uint16_t parent, const std::uint8_t* label,
                                     const std::uint8_t* out) const noexcept {
        return find_hashed(parent, label, out, hash(parent, label));
    }
    /// As find(), with the key's hash() already computed (so a following add() can reuse it).
    [[nodiscard]] std::uint16_t find_hashed(std::uint16_t parent, const std::uint8_t* label,
                                            const std::uint8_t* out,
                                            std::uint32_t key_hash) const noexcept;

    /// Remembers the label written at `out[offset]` as a child of `parent`; returns the new node,
    /// or kRoot when the table is full or the offset cannot be a pointer target.
    std::uint16_t add(std::uint16_t parent, std::uint16_t offset,
                      const std::uint8_t* out) noexcept {
        return add_hashed(parent, offset, hash(parent, out + offset));
    }
    /// As add(), with hash(parent, label) already known.
    std::uint16_t add_hashed(std::uint16_t parent, std::uint16_t offset,
                             std::uint32_t key_hash) noexcept;

    /// The hash of a (parent, label) key, ASCII case folded. `label` starts at its length octet.
    [[nodiscard]] static std::uint32_t hash(std::uint16_t parent,
                                            const std::uint8_t* label) noexcept;

    /// Output offset of a node's label (the pointer target for the suffix it stands for).
    [[nodiscard]] std::uint16_t offset(std::uint16_t node) const noexcept {
        return nodes_[node].offset;
    }
    [[nodiscard]] std::size_t node_count() const noexcept { return count_; }
    /// Drops every node added after the table had `count` nodes.
    void rollback(std::size_t count) noexcept;

private:
    // Left uninitialised on purpose: only nodes below count_ are ever read, so a new builder
    // does not pay for clearing 8 KiB.
    struct Node {
        std::uint16_t parent;
        std::uint16_t offset;
        /// The node's slot in the index; before the index is built, the slot its probe starts at.
        std::uint16_t slot;
        std::uint16_t hash;  ///< high bits of the hash, to skip most false candidates
    };
    /// Whether the node holds the label `label` (length octet first) under `parent`.
    [[nodiscard]] static bool holds(const Node& node, std::uint16_t parent,
                                    const std::uint8_t* label, const std::uint8_t* out,
                                    std::uint16_t tag) noexcept;
    /// Puts node `n` into the index, probing from its home slot.
    void insert(std::uint16_t n) noexcept;
    /// Clears the index (unless it is known clear) and inserts every node.
    void build_index() noexcept;

    std::array<Node, kMaxNodes> nodes_;
    /// node index, 0 = empty; meaningful only while indexed_ (or all zero while slots_clear_).
    std::array<std::uint16_t, kSlots> slots_;
    std::size_t count_ = 1;
    bool indexed_ = false;
    bool slots_clear_ = false;  ///< every slot is 0 (the index was used, then emptied)
};

}  // namespace moat::wire
