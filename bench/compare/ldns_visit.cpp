// ldns's side of the comparison: see ldns_visit.hpp.
#include "ldns_visit.hpp"

#include <ldns/ldns.h>

#include <array>
#include <cstring>
#include <utility>

namespace moat::bench::ldns {

namespace {

/// Frees the packet when the visit ends.
struct PacketGuard {
    ldns_pkt* pkt = nullptr;
    PacketGuard() = default;
    PacketGuard(const PacketGuard&) = delete;
    PacketGuard& operator=(const PacketGuard&) = delete;
    ~PacketGuard() { ldns_pkt_free(pkt); }
};

/// Visits a DNAME rdf: ldns keeps names uncompressed, root label included.
bool visit_name(VisitStats& s, const ldns_rdf* rdf) noexcept {
    if (rdf == nullptr || ldns_rdf_get_type(rdf) != LDNS_RDF_TYPE_DNAME) {
        return false;
    }
    const std::uint8_t* p = ldns_rdf_data(rdf);
    const std::size_t size = ldns_rdf_size(rdf);
    s.begin_name();
    std::size_t i = 0;
    while (i < size && p[i] != 0) {
        s.label(p + i + 1, p[i]);
        i += 1U + p[i];
    }
    s.end_name();
    return i < size;
}

/// The RDATA of any other type: the rdfs' octets back to back (ldns keeps each field in wire
/// form, names uncompressed), which is the record's uncompressed RDATA.
bool visit_opaque(VisitStats& s, const ldns_rr* rr) noexcept {
    thread_local std::array<std::uint8_t, 2 * 65536> buffer;
    std::size_t at = 0;
    for (std::size_t i = 0; i < ldns_rr_rd_count(rr); ++i) {
        const ldns_rdf* rdf = ldns_rr_rdf(rr, i);
        const std::size_t n = ldns_rdf_size(rdf);
        if (n > buffer.size() - at) {
            return false;
        }
        std::memcpy(buffer.data() + at, ldns_rdf_data(rdf), n);
        at += n;
    }
    s.bytes(buffer.data(), at);
    return true;
}

bool visit_rdata(VisitStats& s, const ldns_rr* rr) noexcept {
    const std::size_t count = ldns_rr_rd_count(rr);
    switch (ldns_rr_get_type(rr)) {
        case LDNS_RR_TYPE_A:
        case LDNS_RR_TYPE_AAAA: {
            const std::size_t want = ldns_rr_get_type(rr) == LDNS_RR_TYPE_A ? 4 : 16;
            if (count != 1 || ldns_rdf_size(ldns_rr_rdf(rr, 0)) != want) {
                return false;
            }
            s.bytes(ldns_rdf_data(ldns_rr_rdf(rr, 0)), want);
            return true;
        }
        case LDNS_RR_TYPE_NS:
        case LDNS_RR_TYPE_CNAME:
        case LDNS_RR_TYPE_PTR: return count == 1 && visit_name(s, ldns_rr_rdf(rr, 0));
        case LDNS_RR_TYPE_MX: {
            if (count != 2 || ldns_rdf_size(ldns_rr_rdf(rr, 0)) != 2) {
                return false;
            }
            s.value(ldns_rdf2native_int16(ldns_rr_rdf(rr, 0)));
            return visit_name(s, ldns_rr_rdf(rr, 1));
        }
        case LDNS_RR_TYPE_SOA: {
            if (count != 7 || !visit_name(s, ldns_rr_rdf(rr, 0)) ||
                !visit_name(s, ldns_rr_rdf(rr, 1))) {
                return false;
            }
            for (std::size_t i = 2; i < 7; ++i) {
                if (ldns_rdf_size(ldns_rr_rdf(rr, i)) != 4) {
                    return false;
                }
                s.value(ldns_rdf2native_int32(ldns_rr_rdf(rr, i)));
            }
            return true;
        }
        case LDNS_RR_TYPE_TXT: {
            // One STR rdf per <character-string>: a length octet, then the octets.
            for (std::size_t i = 0; i < count; ++i) {
                const ldns_rdf* rdf = ldns_rr_rdf(rr, i);
                const std::uint8_t* p = ldns_rdf_data(rdf);
                if (ldns_rdf_size(rdf) == 0 || ldns_rdf_size(rdf) != 1U + p[0]) {
                    return false;
                }
                s.bytes(p + 1, p[0]);
            }
            return true;
        }
        default: return visit_opaque(s, rr);
    }
}

bool visit_record(VisitStats& s, const ldns_rr* rr) noexcept {
    ++s.records;
    if (!visit_name(s, ldns_rr_owner(rr))) {
        return false;
    }
    s.value(static_cast<std::uint16_t>(ldns_rr_get_type(rr)));
    s.value(static_cast<std::uint16_t>(ldns_rr_get_class(rr)));
    s.value(ldns_rr_ttl(rr));
    return visit_rdata(s, rr);
}

bool visit_list(VisitStats& s, const ldns_rr_list* list) noexcept {
    for (std::size_t i = 0; i < ldns_rr_list_rr_count(list); ++i) {
        if (!visit_record(s, ldns_rr_list_rr(list, i))) {
            return false;
        }
    }
    return true;
}

/// The OPT record as ldns keeps it: owner (always the root, which ldns does not keep), type,
/// the UDP payload size as class, extended rcode/version/flags as TTL, then the options.
bool visit_opt(VisitStats& s, ldns_pkt* pkt) noexcept {
    ++s.records;
    s.begin_name();
    s.end_name();
    s.value(static_cast<std::uint16_t>(LDNS_RR_TYPE_OPT));
    s.value(ldns_pkt_edns_udp_size(pkt));
    s.value((static_cast<std::uint32_t>(ldns_pkt_edns_extended_rcode(pkt)) << 24U) |
            (static_cast<std::uint32_t>(ldns_pkt_edns_version(pkt)) << 16U) | ldns_pkt_edns_z(pkt));
    if (ldns_pkt_edns_data(pkt) == nullptr) {
        return true;  // RDLENGTH 0: no options
    }
    const ldns_edns_option_list* options = ldns_pkt_edns_get_option_list(pkt);
    if (options == nullptr) {
        return false;  // malformed option list
    }
    for (std::size_t i = 0; i < ldns_edns_option_list_get_count(options); ++i) {
        const ldns_edns_option* option = ldns_edns_option_list_get_option(options, i);
        s.value(ldns_edns_get_code(option));
        s.bytes(ldns_edns_get_data(option), ldns_edns_get_size(option));
    }
    return true;
}

bool visit_packet(VisitStats& s, ldns_pkt* pkt) noexcept {
    // ldns_pkt::_edns_present counts the OPT records seen; only the last one's fields are kept,
    // so a message with more than one cannot be visited.
    const unsigned opt_count = pkt->_edns_present;
    if (opt_count > 1) {
        return false;
    }
    const ldns_rr* tsig = ldns_pkt_tsig(pkt);
    const std::uint16_t flags = static_cast<std::uint16_t>(
        (ldns_pkt_qr(pkt) ? 0x8000U : 0U) |
        ((static_cast<unsigned>(ldns_pkt_get_opcode(pkt)) & 0x0FU) << 11U) |
        (ldns_pkt_aa(pkt) ? 0x0400U : 0U) | (ldns_pkt_tc(pkt) ? 0x0200U : 0U) |
        (ldns_pkt_rd(pkt) ? 0x0100U : 0U) | (ldns_pkt_ra(pkt) ? 0x0080U : 0U) |
        (ldns_pkt_ad(pkt) ? 0x0020U : 0U) | (ldns_pkt_cd(pkt) ? 0x0010U : 0U) |
        (static_cast<unsigned>(ldns_pkt_get_rcode(pkt)) & 0x0FU));
    s.value(ldns_pkt_id(pkt));
    s.value(flags);
    s.value(ldns_pkt_qdcount(pkt));
    s.value(ldns_pkt_ancount(pkt));
    s.value(ldns_pkt_nscount(pkt));
    s.value(static_cast<std::uint16_t>(ldns_pkt_arcount(pkt) + opt_count + (tsig ? 1U : 0U)));
    if (ldns_rr_list_rr_count(ldns_pkt_question(pkt)) > 0) {
        const ldns_rr* q = ldns_rr_list_rr(ldns_pkt_question(pkt), 0);
        if (!visit_name(s, ldns_rr_owner(q))) {
            return false;
        }
        s.value(static_cast<std::uint16_t>(ldns_rr_get_type(q)));
        s.value(static_cast<std::uint16_t>(ldns_rr_get_class(q)));
    }
    if (!visit_list(s, ldns_pkt_answer(pkt)) || !visit_list(s, ldns_pkt_authority(pkt)) ||
        !visit_list(s, ldns_pkt_additional(pkt))) {
        return false;
    }
    if (opt_count == 1 && !visit_opt(s, pkt)) {
        return false;
    }
    return tsig == nullptr || visit_record(s, tsig);
}

}  // namespace

bool visit_message(VisitStats& s, std::span<const std::uint8_t> msg) noexcept {
    PacketGuard guard;
    if (ldns_wire2pkt(&guard.pkt, msg.data(), msg.size()) != LDNS_STATUS_OK) {
        return false;
    }
    return visit_packet(s, guard.pkt);
}

std::string parse_status(std::span<const std::uint8_t> msg) {
    PacketGuard guard;
    const ldns_status st = ldns_wire2pkt(&guard.pkt, msg.data(), msg.size());
    return st == LDNS_STATUS_OK ? std::string("OK") : std::string(ldns_get_errorstr_by_id(st));
}

// --- build ----------------------------------------------------------------------------------

struct Builder::Impl {
    ldns_pkt* pkt = nullptr;
    ldns_buffer* buffer = nullptr;

    ~Impl() {
        ldns_buffer_free(buffer);
        ldns_pkt_free(pkt);
    }
};

Builder::Builder(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Builder::~Builder() = default;

std::unique_ptr<Builder> Builder::prepare(std::span<const std::uint8_t> msg) {
    auto impl = std::make_unique<Impl>();
    if (ldns_wire2pkt(&impl->pkt, msg.data(), msg.size()) != LDNS_STATUS_OK) {
        return nullptr;
    }
    impl->buffer = ldns_buffer_new(LDNS_MAX_PACKETLEN);
    if (impl->buffer == nullptr) {
        return nullptr;
    }
    return std::unique_ptr<Builder>(new Builder(std::move(impl)));
}

std::size_t Builder::build() noexcept {
    ldns_buffer_clear(impl_->buffer);
    if (ldns_pkt2buffer_wire(impl_->buffer, impl_->pkt) != LDNS_STATUS_OK) {
        return 0;
    }
    return ldns_buffer_position(impl_->buffer);
}

std::span<const std::uint8_t> Builder::output() const noexcept {
    return {ldns_buffer_begin(impl_->buffer), ldns_buffer_position(impl_->buffer)};
}

}  // namespace moat::bench::ldns
