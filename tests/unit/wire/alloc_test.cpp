// The read path and span-mode building allocate nothing. This binary replaces every form of the
// global operator new/delete with counting versions; counting is switched on only around the
// code under test, and a deliberately allocating control proves the counter is live.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "moat_visit.hpp"
#include "support/alloc_counter.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"

namespace {

using moat::wire::MessageBuilder;
using moat::wire::MessageView;
using moat::wire::RecordView;

struct alignas(64) Over {
    std::array<std::uint8_t, 64> bytes{};
};

// Keeps the compiler from eliding a new/delete pair (allowed since C++14).
void* volatile g_sink = nullptr;

TEST(Allocations, CounterSeesEveryForm) {
    std::size_t n = 0;
    {
        const Counting counting;
        auto* v = new std::vector<int>(10);  // two: the vector object and its storage
        g_sink = v;
        delete v;
        auto* a = new int[3];
        g_sink = a;
        delete[] a;
        auto* o = new Over;  // aligned form
        g_sink = o;
        delete o;
        auto* t = new (std::nothrow) int(1);
        g_sink = t;
        delete t;
        n = Counting::stop();
    }
    EXPECT_EQ(n, 5U);
}

// Everything the hot paths do with one message, with no heap allowed.
struct Work {
    std::size_t records = 0;
    std::size_t typed = 0;
    bool ok = true;
};

void read_everything(std::span<const std::uint8_t> msg, Work& w) noexcept {
    if (!moat::wire::validate(msg)) {
        w.ok = false;
        return;
    }
    auto view = MessageView::parse(msg);
    if (!view) {
        w.ok = false;
        return;
    }
    moat::bench::VisitStats stats;
    w.ok = w.ok && moat::bench::visit_message(stats, msg);
    for (const moat::wire::Section s : {moat::wire::Section::answer, moat::wire::Section::authority,
                                        moat::wire::Section::additional}) {
        auto range = view->section(s);
        for (const RecordView& rr : range) {
            ++w.records;
            auto typed = moat::wire::rdata::read(rr, range.suffix_cache());
            w.ok = w.ok && typed.has_value();
            w.typed += typed ? 1U : 0U;
            std::array<std::uint8_t, 255> out{};
            w.ok = w.ok && rr.owner.copy_lower_to(out.data()) == rr.owner.length();
            std::array<std::uint8_t, 2048> rdata{};
            w.ok = w.ok && moat::wire::decompress_rdata(rr, rdata).has_value();
        }
        w.ok = w.ok && !range.error();
    }
}

TEST(Allocations, ParseIterateAndReadAllocateNothing) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    const auto fixtures = moat::test::load_fixtures(dir);
    Work work;
    std::size_t n = 0;
    {
        const Counting counting;
        for (const auto& f : fixtures) {
            read_everything(f.bytes, work);
        }
        n = Counting::stop();
    }
    EXPECT_TRUE(work.ok);
    EXPECT_EQ(work.records, 1U + 66U + 240U);  // query's OPT, large, pathological
    EXPECT_EQ(work.typed, work.records);
    EXPECT_EQ(n, 0U);
}

TEST(Allocations, SpanBuildingAllocatesNothing) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    const auto fixtures = moat::test::load_fixtures(dir);
    std::vector<moat::bench::BuildInput> inputs;
    for (const auto& f : fixtures) {
        auto in = moat::bench::prepare_build(f.bytes);
        ASSERT_TRUE(in) << f.name;
        inputs.push_back(std::move(*in));
    }
    std::vector<std::uint8_t> buffer(65535);
    MessageBuilder builder{std::span<std::uint8_t>(buffer)};
    std::array<std::size_t, 3> sizes{};
    std::size_t n = 0;
    {
        const Counting counting;
        for (int round = 0; round < 3; ++round) {  // reuse: reset() must not allocate either
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                builder.reset();
                sizes[i] = moat::bench::build_message(builder, inputs[i]);
            }
        }
        n = Counting::stop();
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        EXPECT_GT(sizes[i], 0U) << fixtures[i].name;
        EXPECT_LE(sizes[i], fixtures[i].bytes.size() + 8) << fixtures[i].name;
    }
    EXPECT_EQ(n, 0U);
}

}  // namespace
