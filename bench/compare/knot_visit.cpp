// libknot's side of the comparison: see knot_visit.hpp.
#include "knot_visit.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

// libknot's headers have no extern "C" guards of their own.
extern "C" {
#include <libknot/libknot.h>
}

namespace moat::bench::knot {

namespace {

constexpr std::size_t kAlign = alignof(std::max_align_t);

void* arena_alloc(void* ctx, std::size_t len) { return static_cast<Arena*>(ctx)->allocate(len); }

void arena_free(void* /*p*/) {}  // released all at once by Arena::reset()

constexpr unsigned kParseFlags = KNOT_PF_NOCANON | KNOT_PF_KEEPWIRE;

std::uint16_t read_u16(const std::uint8_t* p) noexcept {
    return static_cast<std::uint16_t>((p[0] << 8U) | p[1]);
}

/// Visits an uncompressed knot dname (knot's own form after parsing).
void visit_name(VisitStats& s, const knot_dname_t* name) noexcept {
    s.begin_name();
    while (*name != 0) {
        s.label(name + 1, *name);
        name += 1 + *name;
    }
    s.end_name();
}

/// Visits a name that must fill `len` octets at the start of the RDATA exactly or in part;
/// returns its size, 0 when it does not fit (possible only for empty RDATA, which knot keeps
/// for classes other than IN).
std::size_t checked_name(VisitStats& s, const std::uint8_t* p, std::size_t len) noexcept {
    if (len == 0) {
        return 0;
    }
    const std::size_t size = knot_dname_size(p);
    if (size == 0 || size > len) {
        return 0;
    }
    visit_name(s, p);
    return size;
}

bool visit_rdata(VisitStats& s, std::uint16_t type, const knot_rdata_t* rd) noexcept {
    const std::uint8_t* p = rd->data;
    const std::size_t len = rd->len;
    switch (type) {
        case KNOT_RRTYPE_A:
        case KNOT_RRTYPE_AAAA: {
            const std::size_t want = type == KNOT_RRTYPE_A ? 4 : 16;
            if (len != want) {
                return false;
            }
            s.bytes(p, want);
            return true;
        }
        case KNOT_RRTYPE_NS:
        case KNOT_RRTYPE_CNAME:
        case KNOT_RRTYPE_PTR: {
            const knot_dname_t* name = type == KNOT_RRTYPE_NS      ? knot_ns_name(rd)
                                       : type == KNOT_RRTYPE_CNAME ? knot_cname_name(rd)
                                                                   : knot_ptr_name(rd);
            return len != 0 && checked_name(s, name, len) == len;
        }
        case KNOT_RRTYPE_MX: {
            if (len < 3) {
                return false;
            }
            s.value(read_u16(p));
            return checked_name(s, knot_mx_name(rd), len - 2) == len - 2;
        }
        case KNOT_RRTYPE_SOA: {
            if (len == 0) {
                return false;
            }
            const std::size_t m = checked_name(s, knot_soa_primary(rd), len);
            if (m == 0) {
                return false;
            }
            const std::size_t r = checked_name(s, knot_soa_mailbox(rd), len - m);
            if (r == 0 || m + r + 20 != len) {
                return false;
            }
            s.value(knot_soa_serial(rd));
            s.value(knot_soa_refresh(rd));
            s.value(knot_soa_retry(rd));
            s.value(knot_soa_expire(rd));
            s.value(knot_soa_minimum(rd));
            return true;
        }
        case KNOT_RRTYPE_TXT: {
            std::size_t i = 0;
            while (i < len) {
                const std::size_t n = p[i];
                if (i + 1 + n > len) {
                    return false;
                }
                s.bytes(p + i + 1, n);
                i += 1 + n;
            }
            return true;
        }
        case KNOT_RRTYPE_OPT: {
            // knot_pkt_parse has checked the option framing (knot_edns_get_options).
            std::size_t i = 0;
            while (i < len) {
                if (i + 4 > len) {
                    return false;
                }
                const std::size_t n = knot_edns_opt_get_length(p + i);
                if (i + 4 + n > len) {
                    return false;
                }
                s.value(knot_edns_opt_get_code(p + i));
                s.bytes(p + i + 4, n);
                i += 4 + n;
            }
            return true;
        }
        default: s.bytes(p, len); return true;
    }
}

bool visit_packet(VisitStats& s, const knot_pkt_t* pkt) noexcept {
    const std::uint8_t* wire = pkt->wire;
    s.value(knot_wire_get_id(wire));
    s.value(static_cast<std::uint16_t>((knot_wire_get_flags1(wire) << 8U) |
                                       knot_wire_get_flags2(wire)));
    s.value(knot_wire_get_qdcount(wire));
    s.value(knot_wire_get_ancount(wire));
    s.value(knot_wire_get_nscount(wire));
    s.value(knot_wire_get_arcount(wire));
    if (pkt->qname_size != 0) {
        // The QNAME as received (knot_pkt_qname() is a lowercased copy); knot accepts no
        // compression pointer in it.
        visit_name(s, knot_pkt_wire_qname(pkt));
        s.value(knot_pkt_qtype(pkt));
        s.value(knot_pkt_qclass(pkt));
    }
    // knot_pkt_parse keeps one rrset per record, in wire order, OPT and TSIG included (pkt->opt_rr
    // and pkt->tsig_rr point into the additional section).
    for (int sec = KNOT_ANSWER; sec <= KNOT_ADDITIONAL; ++sec) {
        const knot_pktsection_t* section = knot_pkt_section(pkt, static_cast<knot_section_t>(sec));
        for (std::uint16_t i = 0; i < section->count; ++i) {
            const knot_rrset_t* rr = knot_pkt_rr(section, i);
            const knot_rdata_t* rd = rr->rrs.rdata;
            for (std::uint16_t j = 0; j < rr->rrs.count; ++j) {
                ++s.records;
                visit_name(s, rr->owner);
                s.value(rr->type);
                s.value(rr->rclass);
                s.value(rr->ttl);
                if (!visit_rdata(s, rr->type, rd)) {
                    return false;
                }
                rd = knot_rdataset_next(const_cast<knot_rdata_t*>(rd));
            }
        }
    }
    return true;
}

/// Creates a packet over `msg` (parsed in place; knot does not write to it with KEEPWIRE).
knot_pkt_t* new_packet(std::span<const std::uint8_t> msg, knot_mm_t* mm) noexcept {
    // An empty span has no data pointer, and knot_pkt_new(NULL, ...) would allocate a new wire.
    if (msg.empty() || msg.size() > KNOT_WIRE_MAX_PKTSIZE) {
        return nullptr;
    }
    return knot_pkt_new(const_cast<std::uint8_t*>(msg.data()),
                        static_cast<std::uint16_t>(msg.size()), mm);
}

/// KNOT_ETRAIL is a successful parse with bytes after the last record.
bool accepted(int ret) noexcept { return ret == KNOT_EOK || ret == KNOT_ETRAIL; }

}  // namespace

// --- Arena ----------------------------------------------------------------------------------

Arena::Arena(std::size_t block_size) : block_size_(block_size) {
    mm_.ctx = this;
    mm_.alloc = arena_alloc;
    mm_.free = arena_free;
    blocks_.push_back({std::make_unique<std::byte[]>(block_size_), block_size_});
}

void* Arena::allocate(std::size_t n) noexcept {
    n = (n + kAlign - 1) & ~(kAlign - 1);
    if (n > blocks_[current_].size - used_ && !next_block(n)) {
        return nullptr;
    }
    void* p = blocks_[current_].bytes.get() + used_;
    used_ += n;
    return p;
}

bool Arena::next_block(std::size_t n) noexcept {
    while (current_ + 1 < blocks_.size()) {
        ++current_;
        used_ = 0;
        if (n <= blocks_[current_].size) {
            return true;
        }
    }
    const std::size_t size = std::max(n, block_size_);
    std::unique_ptr<std::byte[]> bytes(new (std::nothrow) std::byte[size]);
    if (!bytes) {
        return false;
    }
    try {
        blocks_.push_back({std::move(bytes), size});
    } catch (...) {
        return false;
    }
    current_ = blocks_.size() - 1;
    used_ = 0;
    return true;
}

// --- parse ----------------------------------------------------------------------------------

bool visit_message(VisitStats& s, std::span<const std::uint8_t> msg, Arena& arena) noexcept {
    // The whole packet lives in the arena: rewinding it is the free (knot_pkt_free would only
    // walk the rrsets calling the arena's no-op free).
    arena.reset();
    knot_pkt_t* pkt = new_packet(msg, arena.mm());
    if (pkt == nullptr || !accepted(knot_pkt_parse(pkt, kParseFlags))) {
        return false;
    }
    return visit_packet(s, pkt);
}

std::string parse_status(std::span<const std::uint8_t> msg, Arena& arena) {
    arena.reset();
    knot_pkt_t* pkt = new_packet(msg, arena.mm());
    if (pkt == nullptr) {
        return msg.empty() ? "empty message" : "knot_pkt_new failed";
    }
    const int ret = knot_pkt_parse(pkt, kParseFlags);
    return ret == KNOT_EOK ? std::string("OK") : std::string(knot_strerror(ret));
}

// --- build ----------------------------------------------------------------------------------

struct Builder::Impl {
    struct Entry {
        knot_section_t section = KNOT_ANSWER;
        knot_rrset_t rrset{};
        bool qname_hint = false;       ///< owner is the QNAME: KNOT_COMPR_HINT_QNAME
        int glue_from = -1;            ///< index of the earlier rrset whose RDATA names the owner
        std::uint16_t glue_rdata = 0;  ///< which of its RRs
    };

    std::vector<std::uint8_t> source_wire;  // the parsed copy: owners point into its packet
    knot_pkt_t* source = nullptr;
    std::vector<std::unique_ptr<std::uint8_t[]>> rdata_storage;
    std::vector<Entry> entries;
    std::uint16_t id = 0;
    std::uint8_t flags1 = 0;
    std::uint8_t flags2 = 0;
    std::vector<std::uint8_t> qname;
    std::uint16_t qtype = 0;
    std::uint16_t qclass = 0;
    knot_pkt_t* out = nullptr;  // reused for every build; its wire is malloc'd once

    ~Impl() {
        knot_pkt_free(out);
        knot_pkt_free(source);
    }
};

namespace {

bool same_rrset(const knot_rrset_t& a, const knot_rrset_t& b) noexcept {
    return a.type == b.type && a.rclass == b.rclass && a.ttl == b.ttl &&
           knot_dname_is_case_equal(a.owner, b.owner);
}

/// The name in the RDATA of an NS, MX or SRV record (the types knotd adds glue for).
const knot_dname_t* glue_target(std::uint16_t type, const knot_rdata_t* rd) noexcept {
    switch (type) {
        case KNOT_RRTYPE_NS: return knot_ns_name(rd);
        case KNOT_RRTYPE_MX: return knot_mx_name(rd);
        case KNOT_RRTYPE_SRV: return knot_srv_name(rd);
        default: return nullptr;
    }
}

}  // namespace

Builder::Builder(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Builder::~Builder() = default;

std::unique_ptr<Builder> Builder::prepare(std::span<const std::uint8_t> msg, Hints hints) {
    auto impl = std::make_unique<Impl>();
    impl->source_wire.assign(msg.begin(), msg.end());
    impl->source = new_packet(impl->source_wire, nullptr);
    if (impl->source == nullptr || !accepted(knot_pkt_parse(impl->source, kParseFlags))) {
        return nullptr;
    }
    const knot_pkt_t* src = impl->source;
    impl->id = knot_wire_get_id(src->wire);
    impl->flags1 = knot_wire_get_flags1(src->wire);
    impl->flags2 = knot_wire_get_flags2(src->wire);
    if (src->qname_size != 0) {
        const knot_dname_t* q = knot_pkt_wire_qname(src);
        impl->qname.assign(q, q + src->qname_size);
        impl->qtype = knot_pkt_qtype(src);
        impl->qclass = knot_pkt_qclass(src);
    }

    // Group consecutive records into rrsets, keeping the RDATA in wire order (knot_rdataset_add
    // would sort it canonically).
    for (int sec = KNOT_ANSWER; sec <= KNOT_ADDITIONAL; ++sec) {
        const knot_pktsection_t* section = knot_pkt_section(src, static_cast<knot_section_t>(sec));
        for (std::uint16_t i = 0; i < section->count;) {
            const knot_rrset_t* head = knot_pkt_rr(section, i);
            std::uint16_t end = static_cast<std::uint16_t>(i + 1);
            while (end < section->count && same_rrset(*head, *knot_pkt_rr(section, end))) {
                ++end;
            }
            std::size_t bytes = 0;
            std::uint16_t count = 0;
            for (std::uint16_t k = i; k < end; ++k) {
                const knot_rrset_t* rr = knot_pkt_rr(section, k);
                bytes += rr->rrs.size;
                count = static_cast<std::uint16_t>(count + rr->rrs.count);
            }
            auto storage = std::make_unique<std::uint8_t[]>(bytes);
            std::size_t at = 0;
            for (std::uint16_t k = i; k < end; ++k) {
                const knot_rrset_t* rr = knot_pkt_rr(section, k);
                std::memcpy(storage.get() + at, rr->rrs.rdata, rr->rrs.size);
                at += rr->rrs.size;
            }
            Impl::Entry e;
            e.section = static_cast<knot_section_t>(sec);
            e.rrset = *head;
            e.rrset.rrs.count = count;
            e.rrset.rrs.size = static_cast<std::uint32_t>(bytes);
            e.rrset.rrs.rdata = reinterpret_cast<knot_rdata_t*>(storage.get());
            e.rrset.additional = nullptr;
            impl->rdata_storage.push_back(std::move(storage));
            impl->entries.push_back(e);
            i = end;
        }
    }

    // Compression hints as knotd gives them.
    const knot_dname_t* qname = impl->qname.empty() ? nullptr : impl->qname.data();
    for (std::size_t n = 0; hints == Hints::knotd && n < impl->entries.size(); ++n) {
        Impl::Entry& e = impl->entries[n];
        if (qname != nullptr && knot_dname_is_case_equal(e.rrset.owner, qname)) {
            e.qname_hint = true;
            continue;
        }
        if (e.section != KNOT_ADDITIONAL) {
            continue;
        }
        for (std::size_t m = 0; m < n && e.glue_from < 0; ++m) {
            const knot_rrset_t& from = impl->entries[m].rrset;
            const knot_rdata_t* rd = from.rrs.rdata;
            for (std::uint16_t j = 0;
                 j < from.rrs.count && j + KNOT_COMPR_HINT_RDATA < KNOT_COMPR_HINT_COUNT; ++j) {
                const knot_dname_t* target = glue_target(from.type, rd);
                if (target != nullptr && knot_dname_is_case_equal(target, e.rrset.owner)) {
                    e.glue_from = static_cast<int>(m);
                    e.glue_rdata = j;
                    break;
                }
                rd = knot_rdataset_next(const_cast<knot_rdata_t*>(rd));
            }
        }
    }

    impl->out = knot_pkt_new(nullptr, KNOT_WIRE_MAX_PKTSIZE, nullptr);
    if (impl->out == nullptr) {
        return nullptr;
    }
    return std::unique_ptr<Builder>(new Builder(std::move(impl)));
}

std::size_t Builder::build() noexcept {
    Impl& b = *impl_;
    knot_pkt_t* pkt = b.out;
    knot_pkt_clear(pkt);
    knot_wire_set_id(pkt->wire, b.id);
    knot_wire_set_flags1(pkt->wire, b.flags1);
    knot_wire_set_flags2(pkt->wire, b.flags2);
    if (!b.qname.empty() &&
        knot_pkt_put_question(pkt, b.qname.data(), b.qclass, b.qtype) != KNOT_EOK) {
        return 0;
    }
    for (std::size_t n = 0; n < b.entries.size(); ++n) {
        const Impl::Entry& e = b.entries[n];
        if (knot_pkt_begin(pkt, e.section) != KNOT_EOK) {
            return 0;
        }
        std::uint16_t hint = KNOT_COMPR_HINT_NONE;
        if (e.qname_hint) {
            hint = KNOT_COMPR_HINT_QNAME;
        } else if (e.glue_from >= 0) {
            // Every earlier put added one rrset, so entry m is the packet's rrset m.
            hint =
                knot_compr_hint(&pkt->rr_info[e.glue_from],
                                static_cast<std::uint16_t>(KNOT_COMPR_HINT_RDATA + e.glue_rdata));
        }
        if (knot_pkt_put(pkt, hint, &e.rrset, KNOT_PF_NULL) != KNOT_EOK) {
            return 0;
        }
    }
    return pkt->size;
}

std::span<const std::uint8_t> Builder::output() const noexcept {
    return {impl_->out->wire, impl_->out->size};
}

}  // namespace moat::bench::knot
