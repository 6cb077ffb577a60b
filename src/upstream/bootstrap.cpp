#include "bootstrap.hpp"

#include <array>
#include <asio/ip/udp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <memory>

#include "moat/core/bytes.hpp"
#include "moat/core/log.hpp"
#include "moat/upstream/address.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "random_source.hpp"
#include "reply_match.hpp"

namespace moat::upstream {
namespace {

constexpr std::uint16_t kTypeA = 1;
constexpr std::uint16_t kTypeAaaa = 28;
constexpr std::chrono::seconds kMinKeep{60};

/// A recursive query for `name` and `qtype`, class IN.
std::vector<std::uint8_t> make_query(const wire::Name& name, std::uint16_t qtype,
                                     std::uint16_t id) {
    std::vector<std::uint8_t> q(12);
    store_u16(q.data(), id);
    q[2] = 0x01;  // RD
    q[5] = 1;     // QDCOUNT
    const auto labels = name.wire();
    q.insert(q.end(), labels.begin(), labels.end());
    const std::array<std::uint8_t, 4> tail{static_cast<std::uint8_t>(qtype >> 8U),
                                           static_cast<std::uint8_t>(qtype & 0xFFU), 0, 1};
    q.insert(q.end(), tail.begin(), tail.end());
    return q;
}

/// One exchange: a socket, a timer and the buffers, alive until the answer or the timeout.
struct Exchange {
    explicit Exchange(asio::io_context& io) : socket(io), timer(io) {}
    asio::ip::udp::socket socket;
    asio::steady_timer timer;
    std::vector<std::uint8_t> query;
    std::array<std::uint8_t, 1500> reply{};
    asio::ip::udp::endpoint from;
    bool done = false;
};

}  // namespace

void BootstrapResolver::resolve(const std::string& name, std::chrono::milliseconds timeout,
                                Done done) {
    const auto now = std::chrono::steady_clock::now();
    if (const auto it = known_.find(name); it != known_.end() && it->second.expires > now) {
        asio::post(io_, [done = std::move(done), address = it->second.address] { done(address); });
        return;
    }
    if (servers_.empty()) {
        asio::post(io_, [done = std::move(done), name] {
            done(tl::unexpected("no bootstrap server to resolve " + name));
        });
        return;
    }
    ask(name, 0, kTypeA, timeout, std::move(done));
}

void BootstrapResolver::ask(const std::string& name, std::size_t server, std::uint16_t qtype,
                            std::chrono::milliseconds timeout, Done done) {
    auto qname = wire::Name::from_text(name);
    if (!qname) {
        asio::post(io_, [done = std::move(done), name] {
            done(tl::unexpected(name + " is not a valid name"));
        });
        return;
    }
    static RandomSource random;  // the event loop's thread only
    auto x = std::make_shared<Exchange>(io_);
    x->query = make_query(*qname, qtype, random.next_u16());
    const ServerAddress& to = servers_[server];
    const asio::ip::udp::endpoint endpoint{to_asio(to.address), to.port};
    std::error_code ec;
    x->socket.open(endpoint.protocol(), ec);
    // Tries the next server, then AAAA, then gives up; `why` names the last failure.
    auto next = [this, name, server, qtype, timeout, done](const std::string& why) {
        if (server + 1 < servers_.size()) {
            ask(name, server + 1, qtype, timeout, done);
        } else if (qtype == kTypeA) {
            ask(name, 0, kTypeAaaa, timeout, done);
        } else {
            done(tl::unexpected("cannot resolve " + name +
                                " through the bootstrap servers: " + why));
        }
    };
    if (ec) {
        asio::post(io_, [next, ec] { next(ec.message()); });
        return;
    }
    x->timer.expires_after(timeout);
    x->timer.async_wait([x, next](const std::error_code& e) {
        if (!e && !x->done) {
            x->done = true;
            x->socket.close();
            next("no answer in time");
        }
    });
    x->socket.async_send_to(asio::buffer(x->query), endpoint,
                            [](const std::error_code&, std::size_t) {});
    x->socket.async_receive_from(
        asio::buffer(x->reply), x->from,
        [this, x, endpoint, name, qtype, next, done](const std::error_code& e, std::size_t n) {
            if (x->done) {
                return;
            }
            x->done = true;
            x->timer.cancel();
            const std::span<const std::uint8_t> reply(x->reply.data(), n);
            if (e || x->from != endpoint || check_reply(x->query, reply) != ReplyCheck::accept) {
                next(e ? e.message() : "an unusable answer");
                return;
            }
            auto view = wire::MessageView::parse(reply);
            for (const wire::RecordView& r : view->answers()) {
                const std::size_t size = qtype == kTypeA ? 4 : 16;
                if (wire::to_u16(r.type) == qtype && r.rdata_length == size) {
                    IpAddress address;
                    address.v6 = qtype == kTypeAaaa;
                    std::copy_n(r.rdata().begin(), size, address.bytes.begin());
                    const auto keep =
                        std::max<std::chrono::seconds>(kMinKeep, std::chrono::seconds(r.ttl));
                    known_[name] = {address, std::chrono::steady_clock::now() + keep};
                    log::debug("upstream: bootstrap resolved {} to {}", name, address.to_text());
                    done(address);
                    return;
                }
            }
            next("no address in the answer");
        });
}

}  // namespace moat::upstream
