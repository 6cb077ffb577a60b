#include "doh_upstream.hpp"

#include <algorithm>
#include <array>

namespace moat::upstream {
namespace {

constexpr std::string_view kDnsMessage = "application/dns-message";
constexpr std::uint32_t kMaxStreams = 100;
constexpr std::size_t kMaxDnsMessage = 65535;

}  // namespace

bool DohUpstream::on_connected(TlsStream& stream, std::string& why) {
    const unsigned char* name = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(stream.native_handle(), &name, &length);
    if (std::string_view(reinterpret_cast<const char*>(name), name == nullptr ? 0 : length) !=
        "h2") {
        why = "the server does not offer HTTP/2 (ALPN h2)";
        return false;
    }
    const ServerAddress& s = server();
    authority_ = s.name + (s.port == 443 ? "" : ":" + std::to_string(s.port));
    http::H2ClientLimits limits;
    limits.max_concurrent_streams = kMaxStreams;
    limits.max_response_body_bytes = kMaxDnsMessage;
    h2_ = std::make_unique<http::H2ClientSession>(
        limits, [this](std::uint32_t stream_id, const http::H2Response& response) {
            on_response(stream_id, response);
        });
    h2_->start();
    flush();
    return true;
}

bool DohUpstream::send(Exchange& x) {
    if (!h2_ || receiving_ || !h2_->can_request()) {
        return false;
    }
    std::vector<std::uint8_t> body = x.query;
    std::fill_n(body.begin(), std::min<std::size_t>(2, body.size()), std::uint8_t{0});
    const std::array<http::H2Header, 2> headers{
        {{"content-type", kDnsMessage}, {"accept", kDnsMessage}}};
    const auto stream = h2_->request("POST", authority_, server().path, headers, body);
    if (!stream) {
        return false;
    }
    sent_.emplace(*stream, std::move(x));
    flush();
    return true;
}

void DohUpstream::on_response(std::uint32_t stream, const http::H2Response& response) {
    const auto it = sent_.find(stream);
    if (it == sent_.end()) {
        return;
    }
    heard_from();
    Exchange x = std::move(it->second);
    sent_.erase(it);
    if (response.status != 200 || response.body.size() < 12) {
        x.done(response.status == 0 ? "HTTP/2 stream failed: " + std::string(response.error)
                                    : "HTTP status " + std::to_string(response.status),
               {});
        return;
    }
    std::vector<std::uint8_t> reply(response.body.begin(), response.body.end());
    std::copy_n(x.query.begin(), 2, reply.begin());  // the caller's own ID
    x.done({}, reply);
}

void DohUpstream::on_bytes(std::span<const std::uint8_t> bytes) {
    receiving_ = true;  // answers may ask for more; those streams open after receive()
    auto received = h2_->receive(bytes);
    receiving_ = false;
    flush();
    if (!received) {
        drop("HTTP/2: " + received.error());
        return;
    }
    if (h2_->going_away() && sent_.empty()) {
        // The server ends the session (GOAWAY, e.g. it restarts): what waits goes on a new one.
        drop("the server closed the HTTP/2 session");
        return;
    }
    send_waiting();  // answers free room for more streams
}

void DohUpstream::flush() {
    while (h2_ && h2_->wants_write()) {
        const auto out = h2_->pending_output();
        if (out.empty()) {
            break;
        }
        write(out);
        h2_->consume_output(out.size());
    }
}

std::vector<EncryptedUpstream::Exchange> DohUpstream::take_in_flight() {
    std::vector<Exchange> out;
    out.reserve(sent_.size());
    for (auto& [stream, x] : sent_) {
        out.push_back(std::move(x));
    }
    sent_.clear();
    h2_.reset();
    return out;
}

}  // namespace moat::upstream
