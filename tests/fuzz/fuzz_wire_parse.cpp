// Parse, iterate and read every RDATA of arbitrary bytes. Must never crash or trip a sanitizer,
// every name handed out must walk to exactly its announced length, and reading with the suffix
// cache must give exactly what reading without it gives. Error offsets may lie past the end: a
// name_overrun names where the label that ran out would have ended, at most 64 octets further.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <variant>

#include "fuzz_check.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "unit/support/wire_trace.hpp"

namespace {

using moat::wire::NameView;

void check_name(NameView name) {
    std::size_t length = 1;
    std::size_t labels = 0;
    for (const auto label : name) {
        MOAT_FUZZ_CHECK(!label.empty() && label.size() <= 63);
        length += label.size() + 1;
        ++labels;
    }
    MOAT_FUZZ_CHECK(length == name.length() && labels == name.label_count(), name.to_text());
    std::array<std::uint8_t, 255> out{};
    MOAT_FUZZ_CHECK(name.copy_to(out.data()) == name.length());
    MOAT_FUZZ_CHECK(name.copy_lower_to(out.data()) == name.length());
    MOAT_FUZZ_CHECK(name.iequals(name));
}

void touch(std::span<const std::uint8_t> msg) {
    auto view = moat::wire::MessageView::parse(msg);
    if (!view) {
        MOAT_FUZZ_CHECK(view.error().offset < msg.size() + 64);
        return;
    }
    if (auto q = view->question()) {
        check_name(q->qname);
    }
    auto records = view->records();
    for (const auto& rr : records) {
        check_name(rr.owner);
        MOAT_FUZZ_CHECK(std::size_t{rr.rdata_offset} + rr.rdata_length <= msg.size());
        auto typed = moat::wire::rdata::read(rr, records.suffix_cache());
        if (!typed) {
            MOAT_FUZZ_CHECK(typed.error().offset < msg.size() + 64);
            continue;
        }
        // The names inside typed RDATA are validated views too.
        std::visit(
            [](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, moat::wire::rdata::NameRdata>) {
                    check_name(v.name);
                } else if constexpr (std::is_same_v<T, moat::wire::rdata::Mx>) {
                    check_name(v.exchange);
                } else if constexpr (std::is_same_v<T, moat::wire::rdata::Soa>) {
                    check_name(v.mname);
                    check_name(v.rname);
                } else if constexpr (std::is_same_v<T, moat::wire::rdata::Srv> ||
                                     std::is_same_v<T, moat::wire::rdata::Svcb>) {
                    check_name(v.target);
                } else if constexpr (std::is_same_v<T, moat::wire::rdata::Rrsig>) {
                    check_name(v.signer);
                } else if constexpr (std::is_same_v<T, moat::wire::rdata::Nsec>) {
                    check_name(v.next);
                }
            },
            *typed);
    }
    if (records.error()) {
        MOAT_FUZZ_CHECK(records.error()->offset < msg.size() + 64);
    } else {
        MOAT_FUZZ_CHECK(records.position() <= msg.size());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> msg(data, size);
    touch(msg);
    const auto with =
        moat::test::trace_message(msg, moat::wire::ParseOptions{.suffix_cache = true});
    const auto without =
        moat::test::trace_message(msg, moat::wire::ParseOptions{.suffix_cache = false});
    if (with != without) {
        for (std::size_t i = 0; i < with.size() && i < without.size(); ++i) {
            if (with[i] != without[i]) {
                moat::fuzz::fail("suffix cache changed the result",
                                 "\n  cache:    " + with[i] + "\n  no cache: " + without[i]);
            }
        }
        moat::fuzz::fail("suffix cache changed the number of trace lines");
    }
    return 0;
}
