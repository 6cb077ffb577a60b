// The parse visit (bench/visit/visit_stats.hpp) and the build operation with libknot 3.2.
//
// Parsing follows knotd's setup: the packet is parsed in place over the caller's bytes
// (knot_pkt_new(wire, len, &mm) + knot_pkt_parse) with every allocation taken from a per-message
// bump arena that is rewound before the next message, as knotd flushes its per-query mempool.
// knot decompresses every name into its own uncompressed form; the visit reads labels from those
// bytes. Flags: KNOT_PF_NOCANON (knot would otherwise lowercase owners and RDATA names, which
// changes the bytes visited and costs work the other libraries do not do) and KNOT_PF_KEEPWIRE
// (keeps a TSIG record as an ordinary record instead of cutting it off by rewriting ARCOUNT in
// the caller's message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

extern "C" {  // libknot's headers have no guards of their own
#include <libknot/mm_ctx.h>
}

#include "visit_stats.hpp"

namespace moat::bench::knot {

/// A bump allocator behind a knot_mm_t. Allocation takes the next 16-byte-aligned slice of the
/// current block (a new block when it is full); free does nothing; reset() rewinds to the first
/// block and keeps every block for the next message, so steady-state parsing never calls malloc.
class Arena {
public:
    explicit Arena(std::size_t block_size = 256 * 1024);
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    [[nodiscard]] void* allocate(std::size_t n) noexcept;
    void reset() noexcept {
        current_ = 0;
        used_ = 0;
    }
    /// The context to hand to libknot; valid as long as the arena.
    [[nodiscard]] knot_mm_t* mm() noexcept { return &mm_; }
    [[nodiscard]] std::size_t block_count() const noexcept { return blocks_.size(); }

private:
    struct Block {
        std::unique_ptr<std::byte[]> bytes;
        std::size_t size = 0;
    };
    bool next_block(std::size_t n) noexcept;

    std::vector<Block> blocks_;
    std::size_t block_size_;
    std::size_t current_ = 0;
    std::size_t used_ = 0;
    knot_mm_t mm_{};
};

/// Parses `msg` with libknot (rewinding `arena` first) and visits all of it in wire order; false
/// when knot rejects the message or a record does not have its type's layout.
bool visit_message(VisitStats& s, std::span<const std::uint8_t> msg, Arena& arena) noexcept;

/// knot_pkt_parse's verdict on `msg` as text ("OK" when accepted), for test reports.
std::string parse_status(std::span<const std::uint8_t> msg, Arena& arena);

/// The build operation: rrsets prepared beforehand from a parsed copy of a message (consecutive
/// records with the same section, owner, type, class and TTL form one rrset, RDATA in wire
/// order), written into one reused knot_pkt_t with knot's own compression and the compression
/// hints knotd gives: the QNAME position for owners equal to the QNAME, and for an owner equal to
/// a name in an earlier rrset's RDATA (glue of NS/MX/SRV targets) the position where that name
/// was written.
class Builder {
public:
    /// The compression hints given to knot_pkt_put: knotd's (above), or none at all (knot then
    /// compresses each name only against the QNAME and the name written just before).
    enum class Hints { knotd, none };

    /// Null when libknot cannot parse `msg`.
    static std::unique_ptr<Builder> prepare(std::span<const std::uint8_t> msg,
                                            Hints hints = Hints::knotd);
    ~Builder();
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;

    /// Writes the message again; returns its size, 0 on error.
    std::size_t build() noexcept;
    /// The last message built.
    [[nodiscard]] std::span<const std::uint8_t> output() const noexcept;

    struct Impl;

private:
    explicit Builder(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

}  // namespace moat::bench::knot
