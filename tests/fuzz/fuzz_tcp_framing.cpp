// A DNS-over-TCP connection (RFC 7766) fed any byte stream. The code under test is the server's
// own DnsStreamConnection<asio::ip::tcp::socket>: its socket is one end of a socketpair (no
// network), the target writes the client's bytes into the other end in chunks and reads the
// answers back. The engine is fuzz_engine_world.hpp's; the upstream is a Forwarder with no
// servers, so a query that goes upstream fails a moment later (SERVFAIL from Engine::fail):
// answers come both at once and deferred, out of order, and the pipeline limit is reached.
//
// Why: the 2-octet length framing (RFC 1035 §4.2.2) is the first thing a TCP client controls,
// and it lives inside the Asio connection class (take_queries(), with pipelining and the
// pause/resume of reading), not in a function of its own, so it is fuzzed in place. The DoT
// upstream's framing of replies is fuzz_dot_replies's.
//
// Input: chunk size (1 octet; 0: the whole stream in one write), pipeline limit (1 octet;
// 1 + n % 8 unanswered queries), then the client's byte stream.
//
// Checked against a model of the framing (whole frames up to the first one shorter than a DNS
// header, or up to an incomplete tail): after the client's EOF the connection answers and closes
// by itself; its output is a run of whole frames of at least a header, each a response whose ID
// belongs to a query frame with QR clear, exactly one answer per such frame and none for a frame
// with QR set; and once closed the connection is freed (no reference cycle through a handler).
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dns_stream_connection.hpp"
#include "fuzz_check.hpp"
#include "fuzz_engine_world.hpp"
#include "moat/core/bytes.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/forwarder.hpp"
#include "moat/upstream/turn_end.hpp"
#include "stream_shared.hpp"

namespace {

using Connection = moat::server::DnsStreamConnection<asio::ip::tcp::socket>;

constexpr std::size_t kHeader = 12;
constexpr std::size_t kControlBytes = 2;
/// Rounds of the event loop without progress before the connection counts as hung.
constexpr int kMaxStalls = 200;
constexpr auto kStallWait = std::chrono::milliseconds(5);

/// What the framing rules say about a stream.
struct Framing {
    std::multiset<std::uint16_t> queries;  ///< IDs of the frames that get one answer each
    bool bad_frame = false;                ///< a frame shorter than a header ends the stream

    static Framing of(std::span<const std::uint8_t> stream) {
        Framing f;
        std::size_t at = 0;
        while (stream.size() - at >= 2) {
            const std::size_t length = moat::load_u16(stream.data() + at);
            if (length < kHeader) {
                f.bad_frame = true;  // the connection stops trusting the stream
                break;
            }
            if (stream.size() - at - 2 < length) {
                break;  // it waits for the rest
            }
            const std::uint8_t* message = stream.data() + at + 2;
            if ((message[2] & 0x80U) == 0) {  // QR clear: a query; an answer is never answered
                f.queries.insert(moat::load_u16(message));
            }
            at += 2 + length;
        }
        return f;
    }
};

void check_output(std::span<const std::uint8_t> output, std::multiset<std::uint16_t> expected) {
    std::size_t at = 0;
    while (at < output.size()) {
        MOAT_FUZZ_CHECK(output.size() - at >= 2, "a partial length prefix at the end");
        const std::size_t length = moat::load_u16(output.data() + at);
        MOAT_FUZZ_CHECK(length >= kHeader, "an answer shorter than a header");
        MOAT_FUZZ_CHECK(output.size() - at - 2 >= length, "a partial answer at the end");
        const std::uint8_t* message = output.data() + at + 2;
        MOAT_FUZZ_CHECK((message[2] & 0x80U) != 0, "an answer without QR");
        const auto it = expected.find(moat::load_u16(message));
        MOAT_FUZZ_CHECK(it != expected.end(),
                        "an answer to no query: ID " + std::to_string(moat::load_u16(message)));
        expected.erase(it);
        at += 2 + length;
    }
    MOAT_FUZZ_CHECK(expected.empty(), std::to_string(expected.size()) + " queries unanswered");
}

/// The client's end of the socketpair.
class Peer {
public:
    explicit Peer(int fd) : fd_(fd) {}
    ~Peer() { ::close(fd_); }
    Peer(const Peer&) = delete;
    Peer& operator=(const Peer&) = delete;

    /// Writes what the socket takes now; returns how much. Sets `refused` when the
    /// connection has closed its end.
    std::size_t write_some(std::span<const std::uint8_t> bytes) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            MOAT_FUZZ_CHECK(errno == EPIPE || errno == ECONNRESET, "send failed");
            refused = true;
        }
        return n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    /// Appends what the connection has written; returns how much, and sets `closed` on EOF.
    std::size_t read_available(std::vector<std::uint8_t>& into) {
        std::array<std::uint8_t, 4096> buffer{};
        std::size_t total = 0;
        for (;;) {
            const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
            if (n > 0) {
                into.insert(into.end(), buffer.begin(), buffer.begin() + n);
                total += static_cast<std::size_t>(n);
                continue;
            }
            closed = closed || n == 0 || (errno != EAGAIN && errno != EINTR);
            return total;
        }
    }
    void end_writing() const { ::shutdown(fd_, SHUT_WR); }

    bool closed = false;   ///< the connection's output ended
    bool refused = false;  ///< the connection no longer takes input

private:
    int fd_;
};

asio::io_context& io() {
    static asio::io_context context;
    return context;
}

/// A forwarder without servers: every forward fails, a moment later, on the event loop. Made
/// once: its TLS client context is costly to make and it keeps no state about the queries.
moat::upstream::Forwarder& no_upstream() {
    static moat::upstream::Forwarder forwarder(io(), moat::upstream::Options{});
    return forwarder;
}

const moat::filter::SnapshotPublisher& publisher() {
    static const moat::filter::SnapshotPublisher kPublisher(moat::fuzz::fixed_snapshot());
    return kPublisher;
}

/// Runs what is ready and collects the output; false when nothing happened.
bool pump(Peer& peer, std::vector<std::uint8_t>& output) {
    io().restart();
    const std::size_t handlers = io().poll();
    return peer.read_available(output) > 0 || handlers > 0;
}

void wait_for_progress(Peer& peer, std::vector<std::uint8_t>& output, int& stalls) {
    if (pump(peer, output)) {
        stalls = 0;
        return;
    }
    MOAT_FUZZ_CHECK(++stalls < kMaxStalls, "the connection neither reads, answers nor closes");
    io().restart();
    (void)io().run_one_for(kStallWait);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < kControlBytes) {
        return 0;
    }
    const std::size_t chunk = data[0] == 0 ? size : data[0];
    moat::server::ServerOptions options;
    options.tcp_max_pipelined = 1 + data[1] % 8U;
    options.tcp_idle_timeout = std::chrono::minutes(1);  // never the reason a run ends
    const std::span<const std::uint8_t> stream(data + kControlBytes, size - kControlBytes);

    moat::fuzz::World world(publisher());
    // Not owned: the world outlives the path and every answer.
    const std::shared_ptr<moat::engine::Engine> engine(std::shared_ptr<void>{}, &world.engine);
    moat::server::QueryPath path(engine, no_upstream());

    std::array<int, 2> fds{};
    MOAT_FUZZ_CHECK(
        ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds.data()) == 0);
    Peer peer(fds[1]);
    asio::ip::tcp::socket socket(io());
    socket.assign(asio::ip::tcp::v4(), fds[0]);
    std::weak_ptr<Connection> alive;
    {
        auto connection = std::make_shared<Connection>(
            std::move(socket), moat::fuzz::default_group_client(moat::engine::Transport::tcp), path,
            options, moat::server::ConnectionSlot{}, moat::upstream::TurnEnd::of(io()));
        connection->start();
        alive = connection;
    }

    std::vector<std::uint8_t> output;
    int stalls = 0;
    for (std::size_t sent = 0; sent < stream.size() && !peer.refused;) {
        const std::size_t wrote =
            peer.write_some(stream.subspan(sent, std::min(chunk, stream.size() - sent)));
        sent += wrote;
        if (wrote > 0) {
            (void)pump(peer, output);
            stalls = 0;
        } else {  // the socket is full: the connection must read (or answer) before more fits
            wait_for_progress(peer, output, stalls);
        }
    }
    peer.end_writing();
    while (!peer.closed) {
        wait_for_progress(peer, output, stalls);
    }
    while (pump(peer, output)) {  // the handlers a close cancels
    }
    MOAT_FUZZ_CHECK(alive.expired(), "the connection outlives its close");
    const Framing framing = Framing::of(stream);
    MOAT_FUZZ_CHECK(!peer.refused || framing.bad_frame,
                    "closed on a client that kept to the framing");
    check_output(output, framing.queries);
    return 0;
}
