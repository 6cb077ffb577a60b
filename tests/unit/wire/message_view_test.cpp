// MessageView::lone_root_additional() against records(), the walk it stands in for: over queries
// with an OPT record (bare, with DO and Client Subnet, with a cookie) and every variant made by
// cutting them short, appending octets, changing one octet after the question to a telling value,
// or changing the record counts. Where it gives a record, the walk gives that record alone and
// no error; where the walk gives one additional record at the root and no error, so does it.
#include "moat/wire/message_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace moat::wire {
namespace {

using Bytes = std::vector<std::uint8_t>;

/// A query for example.com A with `records` after the question; `ar` additional records.
Bytes query_with(const Bytes& records, std::uint8_t ar) {
    Bytes m{0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, ar};
    const Bytes question{7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
    m.insert(m.end(), question.begin(), question.end());
    m.insert(m.end(), records.begin(), records.end());
    return m;
}

constexpr std::size_t kQuestionEnd = 12 + 17;

/// OPT at the root: payload size 1232, `ttl_flags` (0x8000: DO), and `rdata`.
Bytes opt(std::uint16_t ttl_flags, const Bytes& rdata) {
    const std::array<std::uint8_t, 11> fixed{0,
                                             0x00,
                                             0x29,
                                             0x04,
                                             0xD0,
                                             0x00,
                                             0x00,
                                             static_cast<std::uint8_t>(ttl_flags >> 8U),
                                             static_cast<std::uint8_t>(ttl_flags & 0xFFU),
                                             static_cast<std::uint8_t>(rdata.size() >> 8U),
                                             static_cast<std::uint8_t>(rdata.size() & 0xFFU)};
    // Sized once and filled, not a vector grown by insert(): GCC 12's LTO warns
    // (-Wstringop-overread) on an insert of an empty rdata, which fails the release build.
    Bytes r(fixed.size() + rdata.size());
    std::copy(fixed.begin(), fixed.end(), r.begin());
    std::copy(rdata.begin(), rdata.end(), r.begin() + static_cast<std::ptrdiff_t>(fixed.size()));
    return r;
}

std::vector<Bytes> base_queries() {
    const Bytes subnet{0x00, 0x08, 0x00, 0x07, 0x00, 0x01, 0x18, 0x00, 192, 0, 2};
    const Bytes cookie{0x00, 0x0A, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8};
    return {query_with(opt(0, {}), 1), query_with(opt(0x8000, subnet), 1),
            query_with(opt(0, cookie), 1)};
}

/// Every variant of `m` that the test reads.
std::vector<Bytes> variants_of(const Bytes& m) {
    std::vector<Bytes> out{m};
    for (std::size_t n = kQuestionEnd; n < m.size(); ++n) {
        out.emplace_back(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
    }
    for (const std::size_t extra : {1U, 2U, 11U}) {
        Bytes longer = m;
        longer.insert(longer.end(), extra, 0);
        out.push_back(longer);
    }
    constexpr std::array<std::uint8_t, 8> kTelling{0x00, 0x01, 0x03, 0x0B, 0x29, 0x80, 0xC0, 0xFF};
    for (std::size_t at = kQuestionEnd; at < m.size(); ++at) {
        for (const std::uint8_t value : kTelling) {
            Bytes changed = m;
            changed[at] = value;
            out.push_back(changed);
        }
    }
    for (const std::size_t count_at : {7U, 9U, 11U}) {  // ancount, nscount, arcount (low octets)
        for (const std::uint8_t count : {std::uint8_t{0}, std::uint8_t{1}, std::uint8_t{2}}) {
            Bytes changed = m;
            changed[count_at] = count;
            out.push_back(changed);
        }
    }
    return out;
}

void expect_same_record(const RecordView& a, const RecordView& b) {
    EXPECT_EQ(a.message.data(), b.message.data());
    EXPECT_EQ(a.message.size(), b.message.size());
    EXPECT_EQ(a.owner.offset(), b.owner.offset());
    EXPECT_EQ(a.owner.length(), b.owner.length());
    EXPECT_EQ(a.owner.label_count(), b.owner.label_count());
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.rclass, b.rclass);
    EXPECT_EQ(a.ttl, b.ttl);
    EXPECT_EQ(a.rdata_offset, b.rdata_offset);
    EXPECT_EQ(a.rdata_length, b.rdata_length);
    EXPECT_EQ(a.section, b.section);
}

TEST(MessageViewLoneRootAdditional, AgreesWithTheWalkOnEveryVariantOfAnEdnsQuery) {
    std::size_t given = 0;
    std::size_t declined = 0;
    const std::vector<Bytes> bases = base_queries();
    for (std::size_t b = 0; b < bases.size(); ++b) {
        const std::vector<Bytes> variants = variants_of(bases[b]);
        for (std::size_t v = 0; v < variants.size(); ++v) {
            const Bytes& m = variants[v];
            SCOPED_TRACE("query " + std::to_string(b) + ", variant " + std::to_string(v));
            auto view = MessageView::parse(m);
            if (!view) {
                continue;
            }
            std::vector<RecordView> walked;
            auto records = view->records();
            for (const RecordView& rr : records) {
                walked.push_back(rr);
            }
            const bool walk_failed = records.error().has_value();
            const std::optional<RecordView> lone = view->lone_root_additional();
            if (lone) {
                ++given;
                ASSERT_FALSE(walk_failed) << "the walk fails where a record was given";
                ASSERT_EQ(walked.size(), 1U);
                expect_same_record(*lone, walked[0]);
            } else {
                ++declined;
                const bool walk_found_one = !walk_failed && walked.size() == 1 &&
                                            walked[0].section == Section::additional &&
                                            walked[0].owner.is_root();
                EXPECT_FALSE(walk_found_one) << "declined a lone root additional record";
            }
        }
    }
    // Both outcomes occur, so neither half of the comparison is empty.
    EXPECT_GT(given, 50U);
    EXPECT_GT(declined, 50U);
}

TEST(MessageViewLoneRootAdditional, ReadsTheOptOfAQuery) {
    const Bytes m = base_queries()[1];
    auto view = MessageView::parse(m);
    ASSERT_TRUE(view);
    const std::optional<RecordView> rr = view->lone_root_additional();
    ASSERT_TRUE(rr);
    EXPECT_EQ(rr->type, RrType::opt);
    EXPECT_EQ(rr->rclass, 1232);
    EXPECT_EQ(rr->ttl, 0x8000U);
    EXPECT_EQ(rr->rdata_offset, kQuestionEnd + 11);
    EXPECT_EQ(rr->rdata_length, 11);
    EXPECT_TRUE(rr->owner.is_root());
}

TEST(MessageViewLoneRootAdditional, DeclinesAQueryWithoutRecords) {
    const Bytes m = query_with({}, 0);
    auto view = MessageView::parse(m);
    ASSERT_TRUE(view);
    EXPECT_FALSE(view->lone_root_additional());
}

}  // namespace
}  // namespace moat::wire
