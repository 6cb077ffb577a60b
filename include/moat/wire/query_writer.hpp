// A query of one question, with or without an OPT record, written in one pass: what dnsmoat
// sends upstream for every cache miss (src/engine/forward_query.cpp).
//
// Why not MessageBuilder: a message with one name has nothing to compress, and the builder's
// set-up and compression table (which hashes and remembers every label of the question, for
// names that never follow) took most of the 935 instructions of building a forwarded query
// (callgrind, bench/miss_footprint.py, docs/benchmarks.md). The octets are the builder's own:
// tests/unit/wire/query_writer_test.cpp writes every query both ways and compares them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "moat/wire/message_builder.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire {

struct OneQuestionQuery {
    std::uint16_t id = 0;
    /// The header's flags word (RD, CD, ...) as it is to be sent; the counts are written here.
    std::uint16_t flags = 0;
    std::span<const std::uint8_t> qname;  ///< uncompressed wire form
    RrType qtype = RrType::a;
    RrClass qclass = RrClass::in;
    /// The OPT record to add, as MessageBuilder::set_edns() takes it; none when null.
    const EdnsOptions* edns = nullptr;
};

/// Replaces the contents of `out` with the query. Errc::bad_argument (and `out` empty) when
/// `qname` is not an uncompressed name or the OPT record's options exceed 65535 octets.
Status write_query(const OneQuestionQuery& query, std::vector<std::uint8_t>& out);

}  // namespace moat::wire
