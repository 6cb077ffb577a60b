// Differential test against ldns (NLnet Labs, Debian libldns-dev): for every corpus message and
// fixture both decoders accept, the questions and every record must agree: same count per
// section, same owner (lower-cased wire form), type, class, TTL, and the same uncompressed RDATA
// (ldns' rdfs concatenated vs to_record().rdata). ldns moves OPT out of the additional section
// into the packet's EDNS fields (and TSIG into its own slot), so OPT is compared field by field.
// Messages accepted by only one side are counted and explained.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/validate.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_trace.hpp"

// clang-format off
// ldns/common.h defines bool, true and false as macros unless stdbool.h was seen first.
#include <stdbool.h>  // NOLINT(modernize-deprecated-headers)
#include <ldns/ldns.h>
// clang-format on

namespace {

using Bytes = std::vector<std::uint8_t>;

struct PktDeleter {
    void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
using Pkt = std::unique_ptr<ldns_pkt, PktDeleter>;

Bytes rdf_bytes(const ldns_rdf* rdf) {
    const std::uint8_t* data = ldns_rdf_data(rdf);
    return {data, data + ldns_rdf_size(rdf)};
}

Bytes lower(Bytes b) {
    // Wire-form names: only the label octets are letters; length octets are < 64 and never
    // in 'A'..'Z' (65..90) -- except lengths 65..90, which cannot occur (labels <= 63).
    for (auto& c : b) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<std::uint8_t>(c | 0x20U);
        }
    }
    return b;
}

/// One record in a comparable form.
struct Flat {
    Bytes owner;  // lower-cased, uncompressed
    unsigned type = 0;
    unsigned rclass = 0;
    std::uint32_t ttl = 0;
    Bytes rdata;  // uncompressed

    friend bool operator==(const Flat&, const Flat&) = default;
};

std::string show(const Flat& f) {
    return moat::test::hex(f.owner) + " type " + std::to_string(f.type) + " class " +
           std::to_string(f.rclass) + " ttl " + std::to_string(f.ttl) + " rdata " +
           moat::test::hex(f.rdata);
}

struct Side {
    std::vector<Flat> questions;
    std::array<std::vector<Flat>, 3> sections;  // OPT excluded from additional
    bool edns = false;
    std::uint16_t udp = 0;
    std::uint8_t ext_rcode = 0;
    std::uint8_t version = 0;
    std::uint16_t z = 0;  // DO and the Z bits
    Bytes edns_options;
};

Side from_ldns(const ldns_pkt* pkt) {
    Side s;
    auto flat = [](const ldns_rr* rr, bool question) {
        Flat f;
        f.owner = lower(rdf_bytes(ldns_rr_owner(rr)));
        f.type = ldns_rr_get_type(rr);
        f.rclass = ldns_rr_get_class(rr);
        if (!question) {
            f.ttl = ldns_rr_ttl(rr);
            for (std::size_t i = 0; i < ldns_rr_rd_count(rr); ++i) {
                const Bytes part = rdf_bytes(ldns_rr_rdf(rr, i));
                f.rdata.insert(f.rdata.end(), part.begin(), part.end());
            }
        }
        return f;
    };
    const ldns_rr_list* q = ldns_pkt_question(pkt);
    for (std::size_t i = 0; i < ldns_rr_list_rr_count(q); ++i) {
        s.questions.push_back(flat(ldns_rr_list_rr(q, i), true));
    }
    const std::array<const ldns_rr_list*, 3> lists = {ldns_pkt_answer(pkt), ldns_pkt_authority(pkt),
                                                      ldns_pkt_additional(pkt)};
    for (std::size_t k = 0; k < 3; ++k) {
        for (std::size_t i = 0; i < ldns_rr_list_rr_count(lists[k]); ++i) {
            s.sections[k].push_back(flat(ldns_rr_list_rr(lists[k], i), false));
        }
    }
    s.edns = ldns_pkt_edns(pkt);
    if (s.edns) {
        s.udp = ldns_pkt_edns_udp_size(pkt);
        s.ext_rcode = ldns_pkt_edns_extended_rcode(pkt);
        s.version = ldns_pkt_edns_version(pkt);
        s.z = ldns_pkt_edns_z(pkt);
        if (const ldns_rdf* data = ldns_pkt_edns_data(pkt)) {
            s.edns_options = rdf_bytes(data);
        }
    }
    return s;
}

/// Ours, from a message validate() accepted. Empty string on success, else what failed.
std::string from_moat(std::span<const std::uint8_t> msg, Side& s) {
    auto view = moat::wire::MessageView::parse(msg);
    if (!view) {
        return "parse failed";
    }
    std::size_t pos = moat::wire::kHeaderSize;
    for (std::size_t i = 0; i < view->header().qdcount; ++i) {
        auto name = moat::wire::decode_name(msg, pos, msg.size(), nullptr);
        if (!name) {
            return "question failed";
        }
        pos = name->end;
        Flat f;
        f.owner.resize(name->view.length());
        name->view.copy_lower_to(f.owner.data());
        f.type = (unsigned{msg[pos]} << 8U) | msg[pos + 1];
        f.rclass = (unsigned{msg[pos + 2]} << 8U) | msg[pos + 3];
        pos += 4;
        s.questions.push_back(std::move(f));
    }
    auto records = view->records();
    for (const auto& rr : records) {
        if (rr.type == moat::wire::RrType::opt) {
            auto opt = moat::wire::rdata::read_opt(rr);
            if (!opt) {
                return "read_opt failed";
            }
            s.edns = true;
            s.udp = opt->udp_payload_size;
            s.ext_rcode = opt->extended_rcode;
            s.version = opt->version;
            s.z = static_cast<std::uint16_t>(rr.ttl & 0xFFFFU);
            s.edns_options.assign(opt->options.bytes().begin(), opt->options.bytes().end());
            continue;
        }
        auto r = moat::wire::to_record(rr);
        if (!r) {
            return "to_record failed: " + moat::wire::describe(r.error());
        }
        Flat f;
        f.owner.resize(rr.owner.length());
        rr.owner.copy_lower_to(f.owner.data());
        f.type = moat::wire::to_u16(r->type);
        f.rclass = r->rclass;
        f.ttl = r->ttl;
        f.rdata = r->rdata;
        s.sections[static_cast<std::size_t>(rr.section)].push_back(std::move(f));
    }
    return records.error() ? "records failed" : "";
}

std::string compare(const Side& ours, const Side& theirs) {
    if (ours.questions != theirs.questions) {
        return "questions differ";
    }
    static constexpr std::array<const char*, 3> kNames = {"answer", "authority", "additional"};
    for (std::size_t k = 0; k < 3; ++k) {
        const auto& a = ours.sections[k];
        const auto& b = theirs.sections[k];
        if (a.size() != b.size()) {
            return std::string(kNames[k]) + " count " + std::to_string(a.size()) + " vs ldns " +
                   std::to_string(b.size());
        }
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!(a[i] == b[i])) {
                return std::string(kNames[k]) + " record " + std::to_string(i) + ": " + show(a[i]) +
                       " vs ldns " + show(b[i]);
            }
        }
    }
    if (ours.edns != theirs.edns || ours.udp != theirs.udp || ours.ext_rcode != theirs.ext_rcode ||
        ours.version != theirs.version || ours.z != theirs.z ||
        ours.edns_options != theirs.edns_options) {
        return "EDNS differs";
    }
    return "";
}

TEST(LdnsDifferential, CorpusAndFixturesDecodeTheSame) {
    MOAT_SHARED_PATH_OR_SKIP(wire_dir, "data/wire");
    auto messages = moat::test::load_corpus(wire_dir);
    if (const auto fixtures = moat::test::shared_path("data/wire-fixtures"); !fixtures.empty()) {
        for (auto& f : moat::test::load_fixtures(fixtures)) {
            messages.push_back({"fixture/" + f.name, std::move(f.bytes)});
        }
    }
    std::size_t both = 0;
    std::size_t neither = 0;
    std::size_t only_ours = 0;
    std::size_t only_ldns = 0;
    std::size_t records = 0;
    for (const auto& m : messages) {
        ldns_pkt* raw = nullptr;
        const ldns_status status = ldns_wire2pkt(&raw, m.bytes.data(), m.bytes.size());
        const Pkt pkt(status == LDNS_STATUS_OK ? raw : nullptr);
        const auto verdict = moat::wire::validate(m.bytes);
        const bool ldns_ok = status == LDNS_STATUS_OK;
        if (!ldns_ok && !verdict) {
            ++neither;
            continue;
        }
        if (ldns_ok != verdict.has_value()) {
            ++(ldns_ok ? only_ldns : only_ours);
            std::printf("only %-4s %-62s ours: %s | ldns: %s\n", ldns_ok ? "ldns" : "moat",
                        m.name.c_str(),
                        verdict ? "ok" : moat::wire::describe(verdict.error()).c_str(),
                        ldns_get_errorstr_by_id(status));
            continue;
        }
        ++both;
        Side ours;
        const std::string failed = from_moat(m.bytes, ours);
        ASSERT_EQ(failed, "") << m.name;
        const Side theirs = from_ldns(pkt.get());
        EXPECT_EQ(compare(ours, theirs), "") << m.name;
        for (const auto& s : ours.sections) {
            records += s.size();
        }
    }
    std::printf(
        "ldns differential: %zu messages: both accept %zu (%zu records compared), both "
        "reject %zu, only moat accepts %zu, only ldns accepts %zu\n",
        messages.size(), both, records, neither, only_ours, only_ldns);
    EXPECT_GE(both, 480U);
    // ldns accepts forward pointers, trailing bytes and compressed names in any RDATA; we do not.
    // The opposite (we accept, ldns rejects) would need a reason: none is known.
    EXPECT_EQ(only_ours, 0U);
}

}  // namespace
