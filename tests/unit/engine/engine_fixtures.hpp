// Helpers for the engine tests: queries and upstream replies built with wire::MessageBuilder,
// answers read back with wire::MessageView, and an engine with a ManualClock, a cache and a
// blocklist made from text. Allocates freely (tests only).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/core/ip.hpp"
#include "moat/engine/engine.hpp"
#include "moat/engine/local_zone.hpp"
#include "moat/engine/options.hpp"
#include "moat/filter/compiler.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/types.hpp"

namespace moat::engine::test {

inline wire::Name name(std::string_view text) { return wire::Name::from_text(text).value(); }

inline IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    return IpAddress::v4_of(a, b, c, d);
}

/// An IPv6 address from its 16 bytes given as 8 groups.
inline IpAddress v6(std::array<std::uint16_t, 8> groups) {
    IpAddress ip{{}, true};
    for (std::size_t i = 0; i < groups.size(); ++i) {
        ip.bytes[2 * i] = static_cast<std::uint8_t>(groups[i] >> 8U);
        ip.bytes[2 * i + 1] = static_cast<std::uint8_t>(groups[i] & 0xFFU);
    }
    return ip;
}

/// ::ffff:a.b.c.d, as a dual-stack socket reports an IPv4 client.
inline IpAddress v4_mapped(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    IpAddress ip{{}, true};
    ip.bytes[10] = 0xFF;
    ip.bytes[11] = 0xFF;
    ip.bytes[12] = a;
    ip.bytes[13] = b;
    ip.bytes[14] = c;
    ip.bytes[15] = d;
    return ip;
}

inline Cidr cidr(IpAddress address, std::uint8_t prefix_length) { return {address, prefix_length}; }

inline Client client_at(IpAddress address, Transport transport = Transport::udp) {
    return {address, 53000, transport};
}

/// A client group of `clients`, every list counting, nothing else set.
inline GroupOptions group(std::string name, std::vector<Cidr> clients) {
    GroupOptions g;
    g.name = std::move(name);
    g.clients = std::move(clients);
    return g;
}

/// An ECS option (RFC 7871) for 192.0.2.0/24, encoded as (code, length, data).
inline std::vector<std::uint8_t> ecs_option() {
    return {0x00, 0x08, 0x00, 0x07, 0x00, 0x01, 24, 0, 192, 0, 2};
}

struct QuerySpec {
    std::uint16_t id = 0xBEEF;
    std::string_view qname = "www.example.com";
    wire::RrType qtype = wire::RrType::a;
    wire::RrClass qclass = wire::RrClass::in;
    std::uint16_t flags = wire::Header::kRd;
    wire::Opcode opcode = wire::Opcode::query;
    bool edns = false;
    bool dnssec_ok = false;
    std::uint16_t udp_payload_size = 1232;
    std::uint8_t edns_version = 0;
    std::vector<std::uint8_t> edns_options{};  ///< encoded, e.g. ecs_option()
};

inline std::vector<std::uint8_t> make_query(const QuerySpec& spec) {
    std::vector<std::uint8_t> out;
    wire::MessageBuilder b(&out);
    b.header().id = spec.id;
    b.header().flags = spec.flags;
    b.header().set_opcode(spec.opcode);
    if (spec.edns) {
        wire::EdnsOptions e;
        e.udp_payload_size = spec.udp_payload_size;
        e.version = spec.edns_version;
        e.dnssec_ok = spec.dnssec_ok;
        e.options = spec.edns_options;
        EXPECT_TRUE(b.set_edns(e));
    }
    EXPECT_TRUE(b.add_question(name(spec.qname), spec.qtype, spec.qclass));
    EXPECT_TRUE(b.finish());
    return out;
}

/// One record for an upstream reply.
struct Rr {
    wire::Section section = wire::Section::answer;
    std::string owner;
    wire::RrType type = wire::RrType::a;
    std::uint32_t ttl = 300;
    std::vector<std::uint8_t> rdata;
};

inline Rr a_rr(std::string owner, std::array<std::uint8_t, 4> address, std::uint32_t ttl = 300) {
    return {wire::Section::answer, std::move(owner), wire::RrType::a, ttl,
            wire::encode::a(address)};
}

struct ReplySpec {
    std::uint16_t id = 0x5151;
    std::uint16_t flags = wire::Header::kQr | wire::Header::kRd | wire::Header::kRa;
    wire::Rcode rcode = wire::Rcode::noerror;
    bool edns = true;  ///< upstreams answer our OPT with one
    bool dnssec_ok = false;
    std::vector<Rr> records;
};

/// An upstream reply to the question of `query` (an upstream_query from a Pending).
inline std::vector<std::uint8_t> make_reply(std::span<const std::uint8_t> query,
                                            const ReplySpec& spec) {
    const auto view = wire::MessageView::parse(query);
    EXPECT_TRUE(view);
    std::vector<std::uint8_t> out;
    if (!view || view->question() == nullptr) {
        return out;
    }
    wire::MessageBuilder b(&out);
    b.header().id = spec.id;
    b.header().flags = spec.flags;
    b.set_rcode(spec.rcode);
    if (spec.edns) {
        wire::EdnsOptions e;
        e.dnssec_ok = spec.dnssec_ok;
        EXPECT_TRUE(b.set_edns(e));
    }
    const wire::Question& q = *view->question();
    EXPECT_TRUE(b.add_question(wire::Name::from_view(q.qname), q.qtype, q.qclass));
    for (const Rr& rr : spec.records) {
        const wire::Name owner = name(rr.owner);
        EXPECT_TRUE(b.add_record(rr.section, owner.wire(), rr.type, wire::to_u16(wire::RrClass::in),
                                 rr.ttl, rr.rdata));
    }
    EXPECT_TRUE(b.finish());
    return out;
}

/// One record of an answer, read back.
struct ReadRecord {
    wire::Section section{};
    std::string owner;  ///< presentation form, trailing dot
    wire::RrType type{};
    std::uint32_t ttl = 0;
    std::vector<std::uint8_t> rdata;  ///< decompressed
    std::string target;               ///< CNAME/PTR/NS target, presentation form
    std::vector<std::string> texts;   ///< TXT strings
};

/// An answer, read back with MessageView.
struct Answer {
    bool parsed = false;
    wire::Header header;
    unsigned rcode = 0;  ///< 12-bit: header low bits + OPT extended rcode
    std::string qname;   ///< presentation form, as written (letter case kept)
    wire::RrType qtype{};
    bool has_opt = false;
    bool dnssec_ok = false;
    std::uint16_t opt_udp_size = 0;
    std::uint8_t edns_version = 0;
    std::vector<std::uint16_t> ede;     ///< info codes of Extended DNS Error options
    std::vector<std::string> ede_text;  ///< their EXTRA-TEXT, same order
    std::vector<std::uint8_t> ecs;      ///< the ECS option data, if present
    std::vector<ReadRecord> records;    ///< every record but OPT, wire order
    std::size_t size = 0;

    [[nodiscard]] std::vector<const ReadRecord*> answers() const {
        std::vector<const ReadRecord*> out;
        for (const auto& r : records) {
            if (r.section == wire::Section::answer) {
                out.push_back(&r);
            }
        }
        return out;
    }
};

inline Answer read_answer(std::span<const std::uint8_t> bytes) {
    Answer a;
    a.size = bytes.size();
    const auto view = wire::MessageView::parse(bytes);
    EXPECT_TRUE(view) << "answer does not parse";
    if (!view) {
        return a;
    }
    a.header = view->header();
    a.rcode = a.header.rcode_low();
    if (const wire::Question* q = view->question()) {
        a.qname = q->qname.to_text();
        a.qtype = q->qtype;
    }
    auto records = view->records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::opt) {
            EXPECT_FALSE(a.has_opt) << "two OPT records in an answer";
            a.has_opt = true;
            const auto opt = wire::rdata::read_opt(rr);
            EXPECT_TRUE(opt);
            if (!opt) {
                continue;
            }
            a.dnssec_ok = opt->dnssec_ok;
            a.opt_udp_size = opt->udp_payload_size;
            a.edns_version = opt->version;
            a.rcode |= static_cast<unsigned>(opt->extended_rcode) << 4U;
            for (const wire::rdata::KeyValue kv : opt->options) {
                if (kv.key == 15 && kv.value.size() >= 2) {
                    a.ede.push_back(static_cast<std::uint16_t>((kv.value[0] << 8U) | kv.value[1]));
                    a.ede_text.emplace_back(kv.value.begin() + 2, kv.value.end());
                } else if (kv.key == 8) {
                    a.ecs.assign(kv.value.begin(), kv.value.end());
                }
            }
            continue;
        }
        ReadRecord r;
        r.section = rr.section;
        r.owner = rr.owner.to_text();
        r.type = rr.type;
        r.ttl = rr.ttl;
        const auto rec = wire::to_record(rr);
        EXPECT_TRUE(rec);
        if (rec) {
            r.rdata = rec->rdata;
        }
        if (rr.type == wire::RrType::cname || rr.type == wire::RrType::ptr ||
            rr.type == wire::RrType::ns) {
            const auto n = wire::rdata::read_name(rr);
            EXPECT_TRUE(n);
            if (n) {
                r.target = n->name.to_text();
            }
        } else if (rr.type == wire::RrType::txt) {
            const auto t = wire::rdata::read_txt(rr);
            EXPECT_TRUE(t);
            if (t) {
                for (const auto s : t->strings) {
                    r.texts.emplace_back(s.begin(), s.end());
                }
            }
        }
        a.records.push_back(std::move(r));
    }
    EXPECT_FALSE(records.error()) << "records of the answer do not parse";
    a.parsed = !records.error();
    return a;
}

inline std::vector<std::uint8_t> bytes4(std::uint8_t a, std::uint8_t b, std::uint8_t c,
                                        std::uint8_t d) {
    return {a, b, c, d};
}

inline std::shared_ptr<const filter::Snapshot> snapshot_of(std::string_view block_text,
                                                           std::string_view allow_text = {}) {
    filter::Compiler c;
    EXPECT_TRUE(c.add_text(
        {1, "block", filter::ListKind::block, filter::ListFormat::auto_detect, false}, block_text));
    if (!allow_text.empty()) {
        EXPECT_TRUE(c.add_text(
            {2, "allow", filter::ListKind::allow, filter::ListFormat::auto_detect, false},
            allow_text));
    }
    auto built = std::move(c).build();
    EXPECT_TRUE(built);
    return built ? *built : nullptr;
}

/// EngineOptions that serve everyone (IPv4 and IPv6).
inline EngineOptions open_options() {
    EngineOptions o;
    o.allowed_clients = {cidr(v4(0, 0, 0, 0), 0), cidr(IpAddress{{}, true}, 0)};
    return o;
}

/// An engine with its publisher, cache and clock; build() after setting the parts.
class Harness {
public:
    Harness() : publisher_(std::make_shared<const filter::Snapshot>()) {}

    EngineOptions options = open_options();
    LocalZone local;
    cache::Options cache_options;
    bool with_cache = true;
    Client client = client_at(v4(192, 168, 1, 50));

    void block(std::string_view block_text, std::string_view allow_text = {}) {
        publisher_.publish(snapshot_of(block_text, allow_text));
    }
    void publish(std::shared_ptr<const filter::Snapshot> snapshot) {
        publisher_.publish(std::move(snapshot));
    }

    Engine& build() {
        cache_ = with_cache ? std::make_shared<cache::Cache>(clock_, cache_options) : nullptr;
        engine_ = std::make_unique<Engine>(options, local, publisher_, cache_);
        return *engine_;
    }
    Engine& engine() {
        if (!engine_) {
            build();
        }
        return *engine_;
    }
    ManualClock& clock() { return clock_; }
    /// The engine's cache (build() makes it), null without one.
    [[nodiscard]] cache::Cache* cache() { return engine_ ? cache_.get() : nullptr; }

    /// decide() on raw bytes; the answer (if any) in last().
    Decision decide_raw(std::span<const std::uint8_t> query, std::optional<Client> from = {}) {
        pending = Pending{};
        const Decision d = engine().decide(query, from.value_or(client), out_, pending);
        last_ = std::span<const std::uint8_t>(out_).first(d.action == Action::respond ? d.size : 0);
        return d;
    }
    Decision decide(const QuerySpec& spec, std::optional<Client> from = {}) {
        query_ = make_query(spec);
        return decide_raw(query_, from);
    }
    Decision complete(std::span<const std::uint8_t> reply) {
        const Decision d = engine().complete(pending, reply, out_);
        last_ = std::span<const std::uint8_t>(out_).first(d.action == Action::respond ? d.size : 0);
        return d;
    }
    Decision complete(const ReplySpec& spec) {
        reply_ = make_reply(pending.upstream_query, spec);
        return complete(reply_);
    }
    Decision fail() {
        const Decision d = engine().fail(pending, out_);
        last_ = std::span<const std::uint8_t>(out_).first(d.action == Action::respond ? d.size : 0);
        return d;
    }

    [[nodiscard]] std::span<const std::uint8_t> last() const { return last_; }
    [[nodiscard]] Answer answer() const { return read_answer(last_); }

    Pending pending;

private:
    ManualClock clock_;
    filter::SnapshotPublisher publisher_;
    std::shared_ptr<cache::Cache> cache_;
    std::unique_ptr<Engine> engine_;
    std::vector<std::uint8_t> out_ = std::vector<std::uint8_t>(wire::kMaxMessageSize);
    std::vector<std::uint8_t> query_;
    std::vector<std::uint8_t> reply_;
    std::span<const std::uint8_t> last_;
};

}  // namespace moat::engine::test
