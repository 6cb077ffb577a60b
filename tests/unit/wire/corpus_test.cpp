// The real-message corpus (../shared/data/wire): every message its source calls well-formed is
// validated, copied out record by record, rebuilt with MessageBuilder, read back and compared
// (see unit/support/wire_roundtrip.hpp for what "the same" means). Every message its source
// calls malformed must be rejected. Where our validate() and the data authors' simple parser
// (index.jsonl `error`) disagree, the case must be listed below with the reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "moat/wire/validate.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_roundtrip.hpp"

namespace {

using moat::wire::Errc;
using moat::wire::WireError;

struct Disagreement {
    WireError ours;   ///< what validate() says (code and offset)
    const char* why;  ///< why our verdict is the right one
};

// Messages the data authors' parser accepts and validate() rejects, each checked by hand.
const std::map<std::string, Disagreement>& expected_disagreements() {
    static const std::map<std::string, Disagreement> kList{
        {"c-ares-fuzzinput/answer_aaaa.bin",
         {{Errc::rdata_length, 58},
          "the AAAA answer has RDLENGTH 4 (01 02 03 04); RFC 3596 §2.2 makes AAAA RDATA exactly 16 "
          "octets. ldns rejects it too."}},
        {"c-ares-fuzzinput/f6606f624be8c628328cea01d2cd07a9.bin",
         {{Errc::rdata_length, 36},
          "the NAPTR answer has RDLENGTH 1; RFC 3403 §4.1 needs ORDER, PREFERENCE, three "
          "<character-string>s and a name. ldns rejects it too."}},
        {"extracted/dnscap__dnspad__p001_0q.bin",
         {{Errc::trailing_data, 28},
          "3 octets (00 01 00) after the only question of a query that announces nothing else; "
          "RFC 1035 §4.1 defines the message as the header and the sections it counts. ldns "
          "ignores trailing octets."}},
        {"knot-fuzz/sample-seed.pkt",
         {{Errc::trailing_data, 28},
          "25 octets after the OPT record the header counts (they look like a second, "
          "header-less query); as above. ldns ignores trailing octets."}},
    };
    return kList;
}

// Messages their source lists as malformed that are well-formed DNS: a fuzzer input that once
// crashed a client is not necessarily a malformed message.
const std::map<std::string, const char*>& well_formed_despite_source() {
    static const std::map<std::string, const char*> kList{
        {"c-ares-fuzzinput/clusterfuzz-5651369832218624.bin",
         "one question (root, type 0, class 0) and exactly the 15 announced answers, all "
         "root-owned A records of class IN with 4-octet RDATA, ending at the last octet; one "
         "TTL has the top bit set (0xffffff11), which RFC 2181 §8 says to read as 0, not a format "
         "error. It broke c-ares' A-reply handling, not the DNS format; ldns accepts it too."},
    };
    return kList;
}

TEST(Corpus, IndexListsEveryMessage) {
    MOAT_SHARED_PATH_OR_SKIP(wire_dir, "data/wire");
    const auto index = moat::test::load_index(wire_dir / "index.jsonl");
    const auto corpus = moat::test::load_corpus(wire_dir);
    EXPECT_EQ(corpus.size(), index.size());
    for (const auto& m : corpus) {
        EXPECT_TRUE(index.contains(m.name)) << m.name;
    }
    for (const auto& [name, error] : expected_disagreements()) {
        EXPECT_TRUE(index.contains(name)) << "stale entry " << name;
    }
    for (const auto& [name, why] : well_formed_despite_source()) {
        EXPECT_TRUE(index.contains(name)) << "stale entry " << name;
        EXPECT_TRUE(moat::test::malformed_per_source(name)) << name;
    }
}

TEST(Corpus, ValidateRoundTripAndAgreeWithTheIndex) {
    MOAT_SHARED_PATH_OR_SKIP(wire_dir, "data/wire");
    const auto index = moat::test::load_index(wire_dir / "index.jsonl");
    const auto corpus = moat::test::load_corpus(wire_dir);
    ASSERT_FALSE(corpus.empty());

    std::size_t valid = 0;      // well-formed per source
    std::size_t malformed = 0;  // malformed per source
    std::size_t malformed_rejected = 0;
    std::size_t rejected = 0;       // well-formed per source, rejected by validate()
    std::size_t round_tripped = 0;  // rebuilt and read back the same
    std::size_t too_big = 0;        // would exceed 65535 octets uncompressed
    std::size_t rebuilt_bytes = 0;
    std::size_t original_bytes = 0;
    std::map<std::string, std::size_t> reasons;

    for (const auto& m : corpus) {
        const auto verdict = moat::wire::validate(m.bytes);
        const auto it = index.find(m.name);
        const std::string index_error = it == index.end() ? std::string() : it->second;
        if (moat::test::malformed_per_source(m.name)) {
            ++malformed;
            const auto exception = well_formed_despite_source().find(m.name);
            if (exception != well_formed_despite_source().end()) {
                EXPECT_TRUE(verdict) << m.name << ": " << moat::wire::describe(verdict.error());
                std::printf("malformed per source, valid: %s\n           why: %s\n", m.name.c_str(),
                            exception->second);
            } else {
                EXPECT_FALSE(verdict) << m.name << " is malformed per its source but validates";
                if (!verdict) {
                    ++malformed_rejected;
                    std::printf("malformed  %-60s ours: %s | index: %s\n", m.name.c_str(),
                                moat::wire::describe(verdict.error()).c_str(), index_error.c_str());
                }
            }
            if (!verdict) {
                continue;
            }
        } else {
            ++valid;
        }
        const bool we_reject = !verdict;
        const bool they_reject = !index_error.empty();
        if (we_reject) {
            ++rejected;
            ++reasons[moat::wire::reason(verdict.error().code)];
        }
        if (we_reject != they_reject && !moat::test::malformed_per_source(m.name)) {
            const auto& list = expected_disagreements();
            const auto known = list.find(m.name);
            std::printf("disagree   %-60s ours: %s | index: %s\n", m.name.c_str(),
                        we_reject ? moat::wire::describe(verdict.error()).c_str() : "ok",
                        they_reject ? index_error.c_str() : "ok");
            if (known == list.end()) {
                ADD_FAILURE() << m.name << ": validate() "
                              << (we_reject ? moat::wire::describe(verdict.error()) : "accepts")
                              << ", index error '" << index_error << "'; not in the list";
            } else {
                EXPECT_TRUE(we_reject) << m.name;
                if (we_reject) {
                    EXPECT_EQ(verdict.error(), known->second.ours)
                        << m.name << ": " << moat::wire::describe(verdict.error());
                }
                std::printf("           why: %s\n", known->second.why);
            }
        } else if (we_reject) {
            std::printf("both-reject %-59s ours: %s | index: %s\n", m.name.c_str(),
                        moat::wire::describe(verdict.error()).c_str(), index_error.c_str());
        }
        if (we_reject) {
            continue;
        }
        const auto trip = moat::test::round_trip(m.bytes);
        switch (trip.status) {
            case moat::test::RoundTrip::Status::same:
                ++round_tripped;
                rebuilt_bytes += trip.rebuilt.size();
                original_bytes += m.bytes.size();
                break;
            case moat::test::RoundTrip::Status::too_big: ++too_big; break;
            case moat::test::RoundTrip::Status::failed:
                ADD_FAILURE() << m.name << ": round trip: " << trip.why;
                break;
        }
    }
    std::printf(
        "corpus: %zu messages: %zu well-formed per source (%zu rejected by validate), %zu "
        "malformed per source (%zu rejected); round trips: %zu same, %zu too big; rebuilt %zu "
        "bytes vs %zu original\n",
        corpus.size(), valid, rejected, malformed, malformed_rejected, round_tripped, too_big,
        rebuilt_bytes, original_bytes);
    for (const auto& [why, n] : reasons) {
        std::printf("  rejected: %3zu x %s\n", n, why.c_str());
    }
    EXPECT_EQ(valid + malformed, corpus.size());
    EXPECT_EQ(malformed_rejected + well_formed_despite_source().size(), malformed);
    EXPECT_EQ(round_tripped + too_big + rejected, valid + well_formed_despite_source().size());
    EXPECT_EQ(rejected, expected_disagreements().size() + 2);  // + the two both sides reject
    EXPECT_GE(round_tripped, 480U);                            // the corpus is mostly well-formed
}

}  // namespace
