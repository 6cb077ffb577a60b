// The HTTP/2 server session of the DoH listener driven by any client bytes. The input is
//   flags (1 octet), chunk sizes (3 octets), then the client's bytes,
// with the connection preface put in front of them when the flags are odd (so both a proper
// client and a bad preface get fuzzed). The bytes go to receive() in chunks of the sizes given,
// in turn (0: all the rest). The handler answers every other request at once and the others
// after the next chunk; the output is drained after each receive() and checked for framing.
//
// Checked: never crashes; open_streams() stays within max_concurrent_streams; one call of
// pending_output() gives at most the 64 KiB high-water mark plus one frame; all the output is a
// run of whole frames led by the server's SETTINGS, none over the default max frame size; the
// handler sees each (odd) stream id at most once, never after receive() failed, and only
// requests within the limits; respond() succeeds from inside the handler, fails on a stream
// answered already and fails after receive() failed, which then keeps failing.
//
// Flags: bit 0 preface, bit 1 consume the output in halves, bits 2-3 max_concurrent_streams
// (1, 2, 4, 100), bit 4 small body and header list limits, bit 5 a 20000-octet answer (several
// DATA frames, flow control) instead of a small one, bit 6 shutdown() after the first chunk.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "moat/http/h2_session.hpp"

namespace {

using moat::http::H2Header;
using moat::http::H2ServerSession;

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr std::size_t kChunkSizes = 3;
constexpr std::size_t kControlBytes = 1 + kChunkSizes;
constexpr std::size_t kFrameHeader = 9;
constexpr std::size_t kDefaultMaxFrame = 16384;  // SETTINGS_MAX_FRAME_SIZE, RFC 9113 §6.5.2
constexpr std::size_t kMaxOutputPerCall = std::size_t{64} * 1024 + kFrameHeader + kDefaultMaxFrame;
constexpr std::uint8_t kSettingsFrame = 0x4;
constexpr std::size_t kLargeAnswer = 20000;

constexpr std::array<std::uint32_t, 4> kConcurrentStreams{1, 2, 4, 100};

// A DNS answer header and some octets; what it says does not matter to the session.
constexpr std::array<std::uint8_t, 16> kSmallAnswer{0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0,
                                                    0,    0,    0,    0,    1, 2, 3, 4};
// Mixed case, a connection-specific field and a pseudo-header, which respond() drops.
constexpr std::array<H2Header, 4> kAnswerHeaders{{{"Content-Type", "application/dns-message"},
                                                  {"cache-control", "max-age=300"},
                                                  {"Connection", "close"},
                                                  {":status", "500"}}};

/// Reads the server's output as frames, across the calls that give it.
class FrameWalker {
public:
    void feed(std::span<const std::uint8_t> bytes) {
        for (const std::uint8_t b : bytes) {
            if (payload_left_ > 0) {
                --payload_left_;
                continue;
            }
            header_[filled_++] = b;
            if (filled_ == kFrameHeader) {
                end_header();
            }
        }
    }

    /// Whether the output so far ends with a whole frame.
    [[nodiscard]] bool at_frame_boundary() const { return filled_ == 0 && payload_left_ == 0; }

private:
    void end_header() {
        filled_ = 0;
        const std::size_t length = std::size_t{header_[0]} << 16U | std::size_t{header_[1]} << 8U |
                                   std::size_t{header_[2]};
        MOAT_FUZZ_CHECK(length <= kDefaultMaxFrame, std::to_string(length));
        if (frames_++ == 0) {
            MOAT_FUZZ_CHECK(header_[3] == kSettingsFrame && header_[4] == 0,
                            "the first frame is not the server's SETTINGS");
        }
        payload_left_ = length;
    }

    std::array<std::uint8_t, kFrameHeader> header_{};
    std::size_t filled_ = 0;
    std::size_t payload_left_ = 0;
    std::size_t frames_ = 0;
};

/// One connection: the session, the requests it delivered and the answers still owed.
class Connection {
public:
    explicit Connection(std::uint8_t flags)
        : flags_(flags),
          limits_(limits_of(flags)),
          answer_((flags & 0x20U) != 0
                      ? std::vector<std::uint8_t>(kLargeAnswer, 0x5A)
                      : std::vector<std::uint8_t>(kSmallAnswer.begin(), kSmallAnswer.end())),
          session_(limits_, [this](std::uint32_t id, const moat::http::H2Request& request) {
              on_request(id, request);
          }) {}

    void receive(std::span<const std::uint8_t> chunk) {
        const auto result = session_.receive(chunk);
        if (failed_) {
            MOAT_FUZZ_CHECK(!result, "receive() succeeded after it failed");
        }
        failed_ = !result;
        if (failed_) {
            MOAT_FUZZ_CHECK(!session_.wants_read());
        }
        check_streams();
        answer_all(due_);  // owed since the previous chunk
        due_.swap(later_);
        drain();
    }

    /// The end of the input: the answers still owed, and what they produce.
    void finish() {
        answer_all(due_);
        answer_all(later_);
        drain();
        check_streams();
        MOAT_FUZZ_CHECK(walker_.at_frame_boundary(), "the output ends inside a frame");
    }

    void shutdown() {
        session_.shutdown();
        drain();
    }

private:
    static moat::http::H2Limits limits_of(std::uint8_t flags) {
        moat::http::H2Limits limits;
        limits.max_concurrent_streams = kConcurrentStreams.at((flags >> 2U) & 0x3U);
        if ((flags & 0x10U) != 0) {
            limits.max_request_body_bytes = 64;
            limits.max_header_list_bytes = 256;
        }
        return limits;
    }

    void on_request(std::uint32_t id, const moat::http::H2Request& request) {
        MOAT_FUZZ_CHECK(!failed_, "a request after receive() failed");
        MOAT_FUZZ_CHECK(id % 2 == 1, std::to_string(id));
        MOAT_FUZZ_CHECK(delivered_.insert(id).second, "stream " + std::to_string(id) + " twice");
        MOAT_FUZZ_CHECK(request.body.size() <= limits_.max_request_body_bytes);
        const std::size_t fields = request.method.size() + request.path.size() +
                                   request.content_type.size() +
                                   (request.accept ? request.accept->size() : 0);
        MOAT_FUZZ_CHECK(fields <= limits_.max_header_list_bytes, std::to_string(fields));
        check_streams();
        if (requests_++ % 2 == 0) {
            MOAT_FUZZ_CHECK(session_.respond(id, 200, kAnswerHeaders, answer_));
            MOAT_FUZZ_CHECK(!session_.respond(id, 200, kAnswerHeaders, answer_));
        } else {
            later_.push_back(id);
        }
    }

    void answer_all(std::vector<std::uint32_t>& ids) {
        for (const std::uint32_t id : ids) {
            // The stream may be gone (reset by the client); once answered, it is never again.
            const bool sent = session_.respond(id, 200, kAnswerHeaders, answer_);
            MOAT_FUZZ_CHECK(!(sent && failed_), "an answer after receive() failed");
            MOAT_FUZZ_CHECK(!session_.respond(id, 200, kAnswerHeaders, answer_));
        }
        ids.clear();
    }

    void check_streams() const {
        MOAT_FUZZ_CHECK(session_.open_streams() <= limits_.max_concurrent_streams,
                        std::to_string(session_.open_streams()));
    }

    void drain() {
        const bool halves = (flags_ & 0x2U) != 0;
        for (;;) {
            const std::span<const std::uint8_t> out = session_.pending_output();
            MOAT_FUZZ_CHECK(out.size() <= kMaxOutputPerCall, std::to_string(out.size()));
            if (out.empty()) {
                return;
            }
            const std::size_t taken = halves ? (out.size() + 1) / 2 : out.size();
            walker_.feed(out.first(taken));
            session_.consume_output(taken);
        }
    }

    std::uint8_t flags_;
    moat::http::H2Limits limits_;
    std::vector<std::uint8_t> answer_;
    std::set<std::uint32_t> delivered_;
    std::vector<std::uint32_t> later_;  ///< deferred during the current chunk
    std::vector<std::uint32_t> due_;    ///< deferred during the previous chunk
    std::size_t requests_ = 0;
    bool failed_ = false;
    FrameWalker walker_;
    // Last, so it goes first: its handler points into the members above.
    H2ServerSession session_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < kControlBytes) {
        return 0;
    }
    const std::uint8_t flags = data[0];
    const std::span<const std::uint8_t> sizes(data + 1, kChunkSizes);
    std::vector<std::uint8_t> client;
    if ((flags & 0x1U) != 0) {
        client.assign(kPreface.begin(), kPreface.end());
    }
    // Byte by byte: GCC 12 at -O2 (aarch64) misreads a range insert from `data` as an overread.
    client.reserve(client.size() + size - kControlBytes);
    for (const std::uint8_t byte :
         std::span<const std::uint8_t>(data + kControlBytes, size - kControlBytes)) {
        client.push_back(byte);
    }

    Connection connection(flags);
    std::size_t pos = 0;
    for (std::size_t chunk = 0; pos < client.size(); ++chunk) {
        const std::size_t want = sizes[chunk % kChunkSizes];
        const std::size_t n = want == 0 ? client.size() - pos : std::min(want, client.size() - pos);
        connection.receive(std::span<const std::uint8_t>(client).subspan(pos, n));
        pos += n;
        if (chunk == 0 && (flags & 0x40U) != 0) {
            connection.shutdown();
        }
    }
    connection.finish();
    return 0;
}
