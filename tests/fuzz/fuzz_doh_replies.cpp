// What a DNS-over-HTTPS server sends back, fed to the upstream's protocol half
// (upstream::DohSession: the HTTP/2 client session and the matching of streams to queries,
// without the TLS connection).
//
// Why: the server's bytes are outside input, parsed by the HTTP/2 client session (nghttp2 under
// moat::http::H2ClientSession), and each stream's end completes a query. The completion may drop
// the connection (take_in_flight()), which must not destroy the HTTP/2 session under its own
// handler, start the next session at once, or try to send another query.
//
// Input: the number of queries (1 octet, 1 + n % 16), the behaviour of the completions (1 octet:
// bit 0 drops the connection at the completion numbered by bits 1-3; bit 4 has every completion
// try to send a query; bit 5 starts a new session right after the drop), the chunk size (1
// octet; 0: the whole stream in one read), then the server's bytes. The client's own output is
// deterministic (streams 1, 3, 5, ...), so seeds answer it (corpus/fuzz_doh_replies).
//
// Checked: every query completes exactly once, by its stream's end or by take_in_flight(); an
// answer is 12..65,535 octets with the query's own ID, a failure has a reason and no answer;
// nothing is delivered after a drop or once receive() failed; a query sent from a completion is
// refused and left as it was.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "doh_session.hpp"
#include "fuzz_check.hpp"
#include "moat/core/bytes.hpp"

namespace {

using moat::load_u16;
using moat::store_u16;
using moat::upstream::DohSession;
using moat::upstream::EncryptedExchange;

constexpr std::size_t kHeader = 12;
constexpr std::size_t kMaxQueries = 16;
constexpr std::size_t kMaxMessage = 65535;

/// Reads input octets; past the end, zeros.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
    std::uint8_t octet() { return at_ < in_.size() ? in_[at_++] : 0; }
    [[nodiscard]] std::span<const std::uint8_t> rest() const {
        return in_.subspan(std::min(at_, in_.size()));
    }

private:
    std::span<const std::uint8_t> in_;
    std::size_t at_ = 0;
};

/// The caller's ID of query `index`: distinct, and never 0 (the ID on the wire).
std::uint16_t caller_id(std::size_t index) {
    return static_cast<std::uint16_t>(0x1111U * (index + 1));
}

struct World {
    DohSession session;
    std::vector<int> completions;  ///< per query: deliveries plus takes, must end at 1
    std::size_t delivered = 0;
    bool drop = false;
    std::size_t drop_at = 0;
    bool send_from_completion = false;
    bool restart_after_drop = false;
    bool dropped = false;

    EncryptedExchange exchange(std::size_t index) {
        EncryptedExchange x;
        x.query.assign(kHeader + 2, 0);
        store_u16(x.query.data(), caller_id(index));
        store_u16(x.query.data() + kHeader, static_cast<std::uint16_t>(index));
        x.done = [this, index](const std::string& error, std::span<const std::uint8_t> reply) {
            ++completions.at(index);
            if (error.empty()) {
                MOAT_FUZZ_CHECK(reply.size() >= kHeader && reply.size() <= kMaxMessage,
                                std::to_string(reply.size()));
                MOAT_FUZZ_CHECK(load_u16(reply.data()) == caller_id(index),
                                "the answer lacks the query's own ID");
            } else {
                MOAT_FUZZ_CHECK(reply.empty(), "a failure with an answer");
            }
        };
        return x;
    }

    void deliver(EncryptedExchange& x, std::string_view error,
                 std::span<const std::uint8_t> reply) {
        MOAT_FUZZ_CHECK(!dropped, "a stream reported after the connection dropped");
        MOAT_FUZZ_CHECK(x.query.size() == kHeader + 2);
        const std::size_t index = load_u16(x.query.data() + kHeader);
        MOAT_FUZZ_CHECK(index < completions.size() && completions[index] == 0,
                        "query " + std::to_string(index) + " delivered twice");
        MOAT_FUZZ_CHECK(load_u16(x.query.data()) == caller_id(index));
        x.done(std::string(error), reply);
        if (drop && delivered++ == drop_at) {
            take_all();
            dropped = true;
            if (restart_after_drop) {
                session.start("dns.test", "/dns-query");
            }
        }
        if (send_from_completion) {
            EncryptedExchange more = exchange(completions.size());
            const std::vector<std::uint8_t> query = more.query;
            MOAT_FUZZ_CHECK(!session.send(more), "a stream opened inside receive()");
            MOAT_FUZZ_CHECK(more.query == query && more.done, "a refused query changed");
        }
        if (dropped && error.empty()) {
            // The answer stays readable until the completion returns (ASan checks the read).
            MOAT_FUZZ_CHECK(load_u16(reply.data()) == caller_id(index));
        }
    }

    void take_all() {
        for (EncryptedExchange& x : session.take_in_flight()) {
            const std::size_t index = load_u16(x.query.data() + kHeader);
            MOAT_FUZZ_CHECK(index < completions.size());
            ++completions[index];
        }
        MOAT_FUZZ_CHECK(!session.in_flight());
    }

    /// What the client would write now, dropped: the seeds answer a known output.
    void drain_output() {
        while (session.wants_write()) {
            const auto out = session.pending_output();
            if (out.empty()) {
                break;
            }
            session.consume_output(out.size());
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader in(std::span<const std::uint8_t>(data, size));
    World w;
    const std::size_t queries = 1 + in.octet() % kMaxQueries;
    const std::uint8_t behaviour = in.octet();
    w.drop = (behaviour & 1U) != 0;
    w.drop_at = (behaviour >> 1U) & 7U;
    w.send_from_completion = (behaviour & 0x10U) != 0;
    w.restart_after_drop = (behaviour & 0x20U) != 0;
    const std::size_t chunk = in.octet();
    const std::span<const std::uint8_t> stream = in.rest();

    w.session.start("dns.test", "/dns-query");
    for (std::size_t i = 0; i < queries; ++i) {
        w.completions.push_back(0);
        EncryptedExchange x = w.exchange(i);
        MOAT_FUZZ_CHECK(w.session.send(x), "query " + std::to_string(i) + " refused");
    }
    w.drain_output();

    const auto deliver = [&w](EncryptedExchange& x, std::string_view error,
                              std::span<const std::uint8_t> reply) { w.deliver(x, error, reply); };
    const std::size_t step = chunk == 0 ? std::max<std::size_t>(stream.size(), 1) : chunk;
    for (std::size_t at = 0; at < stream.size() && !w.dropped; at += step) {
        const std::size_t n = std::min(step, stream.size() - at);
        const auto received = w.session.receive(stream.subspan(at, n), deliver);
        if (!received) {
            MOAT_FUZZ_CHECK(!received.error().empty());
            break;  // the connection is dropped: the rest reaches nobody
        }
        w.drain_output();
    }
    w.take_all();
    for (std::size_t i = 0; i < w.completions.size(); ++i) {
        MOAT_FUZZ_CHECK(w.completions[i] == 1, "query " + std::to_string(i) + " completed " +
                                                   std::to_string(w.completions[i]) + " times");
    }
    return 0;
}
