// validate() is a consistency oracle for the readers: it accepts a message exactly when
//   parse() succeeds, records() yields every announced record without error and ends at the
//   last byte, every record's typed read (rdata::read) and to_record() succeed, and the OPT
//   rules hold (at most one, in the additional section, owned by the root).
// Any disagreement, in either direction, aborts. (Error offsets may lie up to 64 octets past the
// end: a name_overrun names where the label that ran out would have ended.)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/validate.hpp"
#include "unit/support/wire_trace.hpp"

namespace {

/// Empty when the readers accept everything, else the first thing that failed.
std::string readers_verdict(std::span<const std::uint8_t> msg) {
    auto view = moat::wire::MessageView::parse(msg);
    if (!view) {
        return "parse";
    }
    const moat::wire::Header& h = view->header();
    const std::size_t announced = std::size_t{h.ancount} + h.nscount + h.arcount;
    std::size_t seen = 0;
    std::size_t opts = 0;
    auto records = view->records();
    for (const auto& rr : records) {
        ++seen;
        if (rr.type == moat::wire::RrType::opt) {
            ++opts;
            if (opts > 1 || rr.section != moat::wire::Section::additional || !rr.owner.is_root()) {
                return "OPT rules";
            }
        }
        auto typed = moat::wire::rdata::read(rr, records.suffix_cache());
        auto owned = moat::wire::to_record(rr);
        if (typed.has_value() != owned.has_value()) {
            moat::fuzz::fail("rdata::read and to_record disagree", moat::test::record_repr(rr));
        }
        // The allocation-free copy gives the same octets, given the room the header promises.
        std::vector<std::uint8_t> buffer(std::size_t{rr.rdata_length} + std::size_t{2} * 254);
        auto copied = moat::wire::decompress_rdata(rr, buffer);
        MOAT_FUZZ_CHECK(copied.has_value() == owned.has_value(), moat::test::record_repr(rr));
        if (copied) {
            buffer.resize(*copied);
            MOAT_FUZZ_CHECK(buffer == owned->rdata, moat::test::record_repr(rr));
        }
        if (!typed) {
            return "typed read: " + moat::test::error_text(typed.error());
        }
    }
    if (records.error()) {
        return "records: " + moat::test::error_text(*records.error());
    }
    MOAT_FUZZ_CHECK(seen == announced);
    if (records.position() != msg.size()) {
        return "trailing data";
    }
    return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> msg(data, size);
    const auto verdict = moat::wire::validate(msg);
    const std::string readers = readers_verdict(msg);
    if (verdict) {
        MOAT_FUZZ_CHECK(readers.empty(), "validate accepts, readers say " + readers);
    } else {
        MOAT_FUZZ_CHECK(verdict.error().offset < size + 64);
        MOAT_FUZZ_CHECK(!readers.empty(),
                        "readers accept, validate says " + moat::test::error_text(verdict.error()));
    }
    return 0;
}
