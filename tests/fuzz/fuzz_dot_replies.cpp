// What a DNS-over-TLS server sends back, fed to the upstream's framing and matching
// (upstream::DotSession, the protocol half of DotUpstream without the TLS connection).
//
// Why: the server's byte stream is outside input. Its two-octet lengths (RFC 1035 §4.2.2) decide
// where each answer starts, and its IDs decide which query an answer completes, renumbered
// queries included. The completion an answer runs may drop the connection (take_in_flight())
// or send another query (frame()) while the stream is being read.
//
// Input: the number of queries (1 octet, n % 17), their IDs (2 octets each; clashes are common),
// the behaviour of the completions (1 octet: bit 0 drops the connection at the answer numbered
// by bits 1-3, bit 4 sends a new query from every completion, after the drop when there is one,
// with the ID of the answer's octets 2-3), the chunk size (1 octet; 0: the whole stream in one
// read), then the stream.
//
// Checked against a model that reads the whole stream from the start: each answer delivered is
// the next whole frame of at least a header whose ID is in flight on the connection, with the
// query's own ID put back and nothing else changed, and its frame arrived in full; no such frame
// is left undelivered; IDs in flight are unique; each exchange completes once, by an answer or by
// take_in_flight(); between reads at most one partial frame (at most 65,536 octets) is kept,
// exactly the stream's incomplete tail, and nothing once the connection is dropped, whose later
// answers reach no query, not even one sent since with the same ID.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "dot_session.hpp"
#include "fuzz_check.hpp"
#include "moat/core/bytes.hpp"

namespace {

using moat::load_u16;
using moat::store_u16;
using moat::upstream::DotSession;
using moat::upstream::EncryptedExchange;

constexpr std::size_t kHeader = 12;
constexpr std::size_t kMaxQueries = 17;
constexpr std::size_t kMaxPartialFrame = 2 + 65535 - 1;
/// Queries numbered in two octets of their own (completions send more as answers arrive).
constexpr std::size_t kMaxSent = 65535;

/// Reads input octets; past the end, zeros.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
    std::uint8_t octet() { return at_ < in_.size() ? in_[at_++] : 0; }
    std::uint16_t u16() { return static_cast<std::uint16_t>((octet() << 8U) | octet()); }
    [[nodiscard]] std::span<const std::uint8_t> rest() const {
        return in_.subspan(std::min(at_, in_.size()));
    }

private:
    std::span<const std::uint8_t> in_;
    std::size_t at_ = 0;
};

/// The whole stream as the model reads it, and what is in flight on the connection.
struct Model {
    std::span<const std::uint8_t> stream;
    std::size_t cursor = 0;  ///< where the next frame starts
    struct Sent {
        std::uint16_t caller_id;
        std::size_t index;
    };
    std::map<std::uint16_t, Sent> in_flight;  ///< by the ID on the connection

    /// The next frame that answers a query in flight, taken out of flight; the end of the
    /// stream when no whole frame does.
    struct Frame {
        std::size_t start = 0;  ///< of the message, after the length
        std::size_t length = 0;
        Sent sent{};
        bool found = false;
    };
    Frame next_answer() {
        while (stream.size() - cursor >= 2) {
            const std::size_t length = load_u16(stream.data() + cursor);
            if (stream.size() - cursor - 2 < length) {
                break;
            }
            const std::size_t start = cursor + 2;
            cursor = start + length;
            if (length < kHeader) {
                continue;
            }
            const auto it = in_flight.find(load_u16(stream.data() + start));
            if (it == in_flight.end()) {
                continue;
            }
            const Frame f{start, length, it->second, true};
            in_flight.erase(it);
            return f;
        }
        return {};
    }

    /// Where the last whole frame within the first `fed` octets ends.
    [[nodiscard]] std::size_t whole_frames_end(std::size_t fed) const {
        std::size_t at = 0;
        while (fed - at >= 2) {
            const std::size_t length = load_u16(stream.data() + at);
            if (fed - at - 2 < length) {
                break;
            }
            at += 2 + length;
        }
        return at;
    }
};

struct World {
    DotSession session;
    Model model;
    std::vector<int> completions;  ///< per query: answers plus takes, must end at 1
    std::size_t fed = 0;
    std::size_t delivered = 0;
    bool drop = false;
    std::size_t drop_at = 0;
    bool send_from_completion = false;
    bool dropped = false;

    void send(std::uint16_t id) {
        const std::size_t index = completions.size();
        completions.push_back(0);
        EncryptedExchange x;
        x.query.assign(kHeader + 2, 0);
        store_u16(x.query.data(), id);
        store_u16(x.query.data() + kHeader, static_cast<std::uint16_t>(index));
        x.done = [this, index](const std::string& error, std::span<const std::uint8_t>) {
            MOAT_FUZZ_CHECK(error.empty(), error);
            ++completions[index];
        };
        const std::vector<std::uint8_t> query = x.query;
        MOAT_FUZZ_CHECK(!session.full());
        const std::vector<std::uint8_t> framed = session.frame(std::move(x));
        MOAT_FUZZ_CHECK(framed.size() == 2 + query.size() &&
                        load_u16(framed.data()) == query.size());
        MOAT_FUZZ_CHECK(std::equal(query.begin() + 2, query.end(), framed.begin() + 4),
                        "only the ID may change on the way out");
        const std::uint16_t wire_id = load_u16(framed.data() + 2);
        MOAT_FUZZ_CHECK(model.in_flight.emplace(wire_id, Model::Sent{id, index}).second,
                        "ID " + std::to_string(wire_id) + " is in flight twice");
    }

    void deliver(EncryptedExchange& x, std::span<const std::uint8_t> reply) {
        MOAT_FUZZ_CHECK(!dropped, "an answer read after the connection dropped");
        const Model::Frame f = model.next_answer();
        MOAT_FUZZ_CHECK(f.found, "an answer the stream does not hold");
        MOAT_FUZZ_CHECK(f.start + f.length <= fed, "an answer before its frame arrived");
        MOAT_FUZZ_CHECK(reply.size() == f.length, std::to_string(reply.size()));
        MOAT_FUZZ_CHECK(load_u16(reply.data()) == f.sent.caller_id &&
                        load_u16(x.query.data()) == f.sent.caller_id);
        MOAT_FUZZ_CHECK(load_u16(x.query.data() + kHeader) == f.sent.index,
                        "the answer went to another query");
        MOAT_FUZZ_CHECK(
            std::equal(reply.begin() + 2, reply.end(),
                       model.stream.begin() + static_cast<std::ptrdiff_t>(f.start + 2)));
        x.done({}, reply);
        const bool drop_now = drop && delivered++ == drop_at;
        if (drop_now) {
            take_all();
            dropped = true;
        }
        if (send_from_completion && completions.size() < kMaxSent) {
            // After a drop, the first query of the next connection: no answer still in the
            // old connection's bytes may reach it.
            send(load_u16(reply.data() + 2));
        }
        if (drop_now) {
            // The answer stays readable until the completion returns (ASan checks the read).
            MOAT_FUZZ_CHECK(
                std::equal(reply.begin() + 2, reply.end(),
                           model.stream.begin() + static_cast<std::ptrdiff_t>(f.start + 2)));
        }
    }

    void take_all() {
        std::vector<EncryptedExchange> taken = session.take_in_flight();
        MOAT_FUZZ_CHECK(taken.size() == model.in_flight.size(), std::to_string(taken.size()));
        for (EncryptedExchange& x : taken) {
            const std::size_t index = load_u16(x.query.data() + kHeader);
            MOAT_FUZZ_CHECK(index < completions.size());
            ++completions[index];
        }
        model.in_flight.clear();
        MOAT_FUZZ_CHECK(!session.in_flight());
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader in(std::span<const std::uint8_t>(data, size));
    World w;
    const std::size_t queries = in.octet() % kMaxQueries;
    for (std::size_t i = 0; i < queries; ++i) {
        w.send(in.u16());
    }
    const std::uint8_t behaviour = in.octet();
    w.drop = (behaviour & 1U) != 0;
    w.drop_at = (behaviour >> 1U) & 7U;
    w.send_from_completion = (behaviour & 0x10U) != 0;
    const std::size_t chunk = in.octet();
    w.model.stream = in.rest();

    const auto deliver = [&w](EncryptedExchange& x, std::span<const std::uint8_t> reply) {
        w.deliver(x, reply);
    };
    const std::size_t total = w.model.stream.size();
    const std::size_t step = chunk == 0 ? std::max<std::size_t>(total, 1) : chunk;
    for (std::size_t at = 0; at < total && !w.dropped; at += step) {
        const std::size_t n = std::min(step, total - at);
        w.fed = at + n;
        w.session.receive(w.model.stream.subspan(at, n), deliver);
        if (w.dropped) {
            MOAT_FUZZ_CHECK(w.session.buffered() == 0, "the dropped connection's bytes stay");
            break;
        }
        MOAT_FUZZ_CHECK(w.session.buffered() <= kMaxPartialFrame,
                        std::to_string(w.session.buffered()));
        MOAT_FUZZ_CHECK(
            w.session.buffered() == w.fed - w.model.whole_frames_end(w.fed),
            "kept " + std::to_string(w.session.buffered()) + " of " + std::to_string(w.fed));
    }
    if (!w.dropped) {
        MOAT_FUZZ_CHECK(!w.model.next_answer().found, "a whole answer was not delivered");
    }
    w.take_all();
    for (std::size_t i = 0; i < w.completions.size(); ++i) {
        MOAT_FUZZ_CHECK(w.completions[i] == 1, "query " + std::to_string(i) + " completed " +
                                                   std::to_string(w.completions[i]) + " times");
    }
    return 0;
}
