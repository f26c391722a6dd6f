//===- HttpServer.cpp - The endpoints on rank 0 ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "HttpServer.h"

#include "CompletionText.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <ctime>
#include <sys/socket.h>
#include <unistd.h>

namespace dtensor::server {

namespace {

const char *const kJson = "application/json";

/// httplib listens with a backlog of CPPHTTPLIB_LISTEN_BACKLOG, compiled
/// into Debian's library as 5: with more clients than that connecting at
/// once, the kernel drops SYNs and those clients retry a second later.
/// Linux lets listen() be called again on a listening socket to raise it.
class BacklogServer : public httplib::Server {
public:
  bool raiseBacklog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }
};

/// The label of a path in the request counters: the known endpoints, else
/// "other" (so that random paths cannot grow the metrics without bound).
std::string endpointLabel(const std::string &path) {
  for (const char *known :
       {"/v1/next_token", "/v1/generate", "/v1/completions",
        "/v1/chat/completions", "/v1/models", "/tokenize", "/detokenize",
        "/health", "/metrics", "/admin/shutdown"})
    if (path == known)
      return known;
  return "other";
}

void reply(httplib::Response &res, int status, const std::string &body) {
  res.status = status;
  res.set_content(body, kJson);
}

bool isLoopback(const std::string &address) {
  return address == "127.0.0.1" || address == "::1" ||
         address.rfind("::ffff:127.", 0) == 0 || address.rfind("127.", 0) == 0;
}

/// The 503 message while not serving.
std::string unavailable(const Health &health) {
  return health.state() == Health::State::Failed
             ? "the server failed: " + health.message()
             : "the server is shutting down";
}

} // namespace

HttpServer::HttpServer(const Options &options, ServerState &state)
    : options_(options), state_(state),
      server_(std::make_unique<BacklogServer>()) {
  routes();
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::routes() {
  httplib::Server &server = *server_;
  size_t threads = static_cast<size_t>(options_.httpThreads);
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  // httplib's default sets SO_REUSEPORT, with which a second server on the
  // same port binds too and silently takes part of the traffic. Only
  // SO_REUSEADDR (a restart may bind while old connections linger): a busy
  // port is an error.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_payload_max_length(options_.maxBodyBytes);
  // Short keep-alive: stop() waits for idle connections to time out.
  server.set_keep_alive_timeout(1);
  server.set_read_timeout(5);
  server.set_write_timeout(5);

  auto model = [this](JobKind kind) {
    return [this, kind](const httplib::Request &req, httplib::Response &res) {
      if (state_.health.state() != Health::State::Serving)
        return reply(res, 503, errorBody(unavailable(state_.health)));
      Request request;
      RequestError error;
      if (!parseRequest(kind, req.body, state_.limits, request, error))
        return reply(res, error.status, errorBody(error.message));
      auto job = std::make_shared<Job>(kind, request.tokens,
                                       request.maxNewTokens, request.logits);
      if (!state_.queue.push(job))
        return reply(res, 503, errorBody(unavailable(state_.health)));
      JobResult result = job->wait();
      if (result.status != 200)
        return reply(res, result.status, errorBody(result.error));
      reply(res, 200, answerBody(request, result));
    };
  };
  server.Post("/v1/next_token", model(JobKind::NextToken));
  server.Post("/v1/generate", model(JobKind::Generate));

  // With --api-key every request but the probes' needs the key (as
  // vLLM's --api-key): checked before routing, so unknown paths get 401 too.
  if (!options_.apiKey.empty()) {
    std::string expected = "Bearer " + options_.apiKey;
    server.set_pre_routing_handler(
        [expected](const httplib::Request &req, httplib::Response &res) {
          if (req.path == "/health" || req.path == "/metrics")
            return httplib::Server::HandlerResponse::Unhandled;
          if (req.get_header_value("Authorization") == expected)
            return httplib::Server::HandlerResponse::Unhandled;
          res.set_header("WWW-Authenticate", "Bearer");
          reply(res, 401,
                errorBody("missing or wrong API key: send the header "
                          "'Authorization: Bearer <key>' (--api-key)"));
          return httplib::Server::HandlerResponse::Handled;
        });
  }

  // OpenAI's completions API on token ids, or on text with --tokenizer;
  // "stream": true answers with server-sent events as the tokens come.
  // /v1/completions and /v1/chat/completions: the same jobs, answered in
  // their own shapes.
  auto completions = [this](bool chat) {
    return [this, chat](const httplib::Request &req, httplib::Response &res) {
      if (state_.health.state() != Health::State::Serving)
        return reply(res, 503, errorBody(unavailable(state_.health)));
      Request request;
      RequestError error;
      const tooling::Tokenizer *tokenizer = state_.tokenizer.get();
      ChatSetup setup{tokenizer, state_.chatTemplate.get(), state_.bosToken,
                      state_.eosToken};
      if (!(chat ? parseChat(req.body, state_.limits, setup, request, error)
                 : parseCompletion(req.body, state_.limits, request, error,
                                   tokenizer)))
        return reply(res, error.status, errorBody(error.message));
      // One job per choice: they run side by side in the batch, their draws
      // keyed by their index.
      std::vector<std::shared_ptr<Job>> jobs;
      for (int64_t choice = 0; choice < request.n; ++choice) {
        auto job = std::make_shared<Job>(JobKind::Completion, request.tokens,
                                         request.maxNewTokens, false);
        job->stop = request.stop;
        job->stop.insert(job->stop.end(), state_.endOfSequence.begin(),
                         state_.endOfSequence.end());
        job->sampling = request.sampling;
        job->choice = static_cast<uint64_t>(choice);
        job->logprobs = request.logprobs;
        jobs.push_back(std::move(job));
      }
      CompletionMeta meta;
      meta.id =
          (chat ? "chatcmpl-" : "cmpl-") + std::to_string(++state_.completions);
      meta.created = static_cast<int64_t>(std::time(nullptr));
      meta.model = request.model.empty() ? state_.modelName : request.model;
      for (const auto &job : jobs)
        if (!state_.queue.push(job)) {
          for (const auto &queued : jobs)
            queued->cancel();
          return reply(res, 503, errorBody(unavailable(state_.health)));
        }
      if (!request.stream) {
        std::vector<JobResult> results(jobs.size());
        std::vector<ChoiceOutput> choices(jobs.size());
        for (size_t i = 0; i < jobs.size(); ++i) {
          const std::shared_ptr<Job> &job = jobs[i];
          JobResult &result = results[i];
          if (!tokenizer) {
            result = job->wait();
          } else {
            // The text as it comes, to end the job at a stop string rather
            // than at max_tokens.
            CompletionText completion(*tokenizer, request.stopStrings);
            size_t seen = 0;
            for (bool done = false; !done && !completion.stopped();) {
              std::vector<int64_t> tokens;
              done = job->next(seen, tokens, result,
                               std::chrono::milliseconds(100));
              for (int64_t token : tokens)
                choices[i].text += completion.add(token);
            }
            if (completion.stopped()) {
              job->cancel();
              result = job->wait();
              result.finishReason = "stop";
              size_t kept =
                  std::min(result.generated.size(), completion.tokens());
              result.generated.resize(kept);
              if (result.logprobs.size() > kept)
                result.logprobs.resize(kept);
            } else {
              choices[i].text += completion.finish();
            }
          }
          if (result.status != 200) {
            for (const auto &other : jobs)
              other->cancel();
            return reply(res, result.status, errorBody(result.error));
          }
          choices[i].result = &result;
        }
        return reply(res, 200,
                     chat ? chatBody(request, choices, meta, tokenizer)
                          : completionBody(request, choices, meta, tokenizer));
      }
      std::shared_ptr<Job> job = jobs[0];
      res.set_header("Cache-Control", "no-cache");
      auto seen = std::make_shared<size_t>(0);
      std::shared_ptr<CompletionText> completion;
      if (tokenizer)
        completion =
            std::make_shared<CompletionText>(*tokenizer, request.stopStrings);
      // With echo the prompt's text comes first, in an event of no tokens.
      auto echo = std::make_shared<std::string>(
          request.echo ? request.promptText : std::string());
      bool logprobs = request.logprobs >= 0;
      // A chat stream opens with the assistant's role.
      auto opened = std::make_shared<bool>(!chat);
      // One event of either API.
      auto event = [meta, chat, tokenizer](
                       const std::vector<int64_t> &tokens,
                       const std::string &finishReason, const std::string &text,
                       const std::vector<TokenLogprobs> *entries) {
        return chat ? chatEvent(meta, false, tokens, text, finishReason,
                                entries, tokenizer)
                    : completionEvent(meta, tokens, finishReason, text, entries,
                                      tokenizer);
      };
      res.set_chunked_content_provider(
          "text/event-stream",
          [job, meta, seen, completion, echo, logprobs, tokenizer, opened,
           event](size_t, httplib::DataSink &sink) {
            // A closed connection cancels the job: its slot frees at the next
            // step.
            if (!sink.is_writable()) {
              job->cancel();
              return false;
            }
            std::string events;
            if (!*opened) {
              events += chatEvent(meta, true, {}, "", "", nullptr, tokenizer);
              *opened = true;
            }
            if (!echo->empty()) {
              events += completionEvent(meta, {}, "", *echo);
              echo->clear();
            }
            std::vector<int64_t> tokens;
            std::vector<TokenLogprobs> entries;
            JobResult result;
            bool done = job->next(*seen, tokens, result,
                                  std::chrono::milliseconds(100), &entries);
            // One event per token, as OpenAI's streams do, however many
            // tokens arrived since the last call.
            for (size_t i = 0; i < tokens.size(); ++i) {
              int64_t token = tokens[i];
              std::vector<TokenLogprobs> entry;
              if (logprobs && i < entries.size())
                entry.push_back(entries[i]);
              const std::vector<TokenLogprobs> *tokenLogprobs =
                  logprobs ? &entry : nullptr;
              if (!completion) {
                events += event({token}, "", "", tokenLogprobs);
                continue;
              }
              std::string text = completion->add(token);
              events += event({token}, "", text, tokenLogprobs);
              if (completion->stopped()) {
                // The rest of the job is not wanted: free its slot.
                job->cancel();
                done = true;
                result.status = 200;
                result.finishReason = "stop";
                break;
              }
            }
            if (done) {
              std::string rest;
              if (completion && result.status == 200)
                rest = completion->finish();
              if (result.status != 200)
                events += streamErrorEvent(result.status, result.error);
              else
                events += event({}, result.finishReason, rest, nullptr) +
                          "data: [DONE]\n\n";
            }
            if (!events.empty() && !sink.write(events.data(), events.size())) {
              job->cancel();
              return false;
            }
            if (done)
              sink.done();
            return true;
          },
          [job](bool success) {
            if (!success)
              job->cancel();
          });
    };
  };
  server.Post("/v1/completions", completions(false));
  server.Post("/v1/chat/completions", completions(true));

  // vLLM's /tokenize and /detokenize, with --tokenizer.
  auto tokenizerEndpoint = [this](bool encode) {
    return [this, encode](const httplib::Request &req, httplib::Response &res) {
      if (!state_.tokenizer)
        return reply(res, 404,
                     errorBody(req.path + " needs a tokenizer: start the "
                                          "server with --tokenizer DIR"));
      std::string answer;
      RequestError error;
      bool ok = encode ? tokenizeAnswer(req.body, state_.limits,
                                        *state_.tokenizer, answer, error)
                       : detokenizeAnswer(req.body, state_.limits,
                                          *state_.tokenizer, answer, error);
      if (!ok)
        return reply(res, error.status, errorBody(error.message));
      reply(res, 200, answer);
    };
  };
  server.Post("/tokenize", tokenizerEndpoint(true));
  server.Post("/detokenize", tokenizerEndpoint(false));

  server.Get("/v1/models", [this](const httplib::Request &,
                                  httplib::Response &res) {
    nlohmann::json model = {{"id", state_.modelName},
                            {"object", "model"},
                            {"created", 0},
                            {"owned_by", "dtensor"}};
    reply(res, 200,
          nlohmann::json{{"object", "list"}, {"data", {model}}}.dump());
  });

  server.Get("/health", [this](const httplib::Request &,
                               httplib::Response &res) {
    nlohmann::json body;
    switch (state_.health.state()) {
    case Health::State::Serving:
      body = {{"status", "ok"},
              {"ranks", state_.ranks},
              {"batch", state_.batch},
              {"seq_len", state_.limits.seqLen},
              {"vocab", state_.limits.vocab},
              {"kv_cache", state_.limits.cache},
              {"pid", static_cast<int64_t>(getpid())}};
      break;
    case Health::State::Draining:
      body = {{"status", "shutting down"}, {"reason", state_.health.message()}};
      break;
    case Health::State::Failed:
      body = {{"status", "failed"}, {"error", state_.health.message()}};
      break;
    }
    bool ok = state_.health.state() == Health::State::Serving;
    reply(res, ok ? 200 : 503,
          body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });

  server.Get("/metrics", [this](const httplib::Request &,
                                httplib::Response &res) {
    res.set_content(
        state_.metrics->render(state_.queue.depth(), state_.activeRows.load(),
                               state_.health.state() == Health::State::Serving),
        "text/plain; version=0.0.4");
  });

  server.Post("/admin/shutdown", [this](const httplib::Request &req,
                                        httplib::Response &res) {
    if (!isLoopback(req.remote_addr))
      return reply(res, 403,
                   errorBody("/admin/shutdown is for loopback clients only"));
    state_.requestShutdown("POST /admin/shutdown");
    reply(res, 202, nlohmann::json{{"status", "shutting down"}}.dump());
  });

  // The other methods on known paths: 405 with the one allowed.
  auto wrongMethod = [](const char *allowed) {
    return [allowed](const httplib::Request &req, httplib::Response &res) {
      res.set_header("Allow", allowed);
      reply(res, 405,
            errorBody(req.method + " is not allowed on " + req.path + " (use " +
                      allowed + ")"));
    };
  };
  for (const char *path : {"/v1/next_token", "/v1/generate", "/v1/completions",
                           "/v1/chat/completions", "/tokenize", "/detokenize",
                           "/admin/shutdown"}) {
    server.Get(path, wrongMethod("POST"));
    server.Put(path, wrongMethod("POST"));
    server.Delete(path, wrongMethod("POST"));
    server.Patch(path, wrongMethod("POST"));
  }
  for (const char *path : {"/health", "/metrics", "/v1/models"}) {
    server.Post(path, wrongMethod("GET"));
    server.Put(path, wrongMethod("GET"));
    server.Delete(path, wrongMethod("GET"));
    server.Patch(path, wrongMethod("GET"));
  }

  // Errors httplib answers itself (404, 413, 400) get a JSON message too;
  // answers that already have one keep it.
  size_t maxBody = options_.maxBodyBytes;
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [maxBody](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        std::string message;
        if (res.status == 404)
          message =
              "no endpoint " + req.method + " " + req.path +
              " (POST /v1/next_token, POST /v1/generate, POST "
              "/v1/completions, POST /v1/chat/completions, POST /tokenize, "
              "POST /detokenize, GET "
              "/v1/models, GET /health, GET /metrics, POST "
              "/admin/shutdown)";
        else if (res.status == 413)
          message = "the request body exceeds " + std::to_string(maxBody) +
                    " bytes (--max-body-bytes)";
        else if (res.status == 400)
          // What httplib refuses before routing: a request it cannot parse, or
          // a POST without Content-Length (curl -X POST without -d sends one).
          message = "malformed HTTP request (a POST needs a Content-Length "
                    "header, even for an empty body)";
        else
          message = "HTTP error " + std::to_string(res.status);
        reply(res, res.status, errorBody(message));
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler([](const httplib::Request &,
                                  httplib::Response &res,
                                  std::exception_ptr error) {
    std::string message = "internal error";
    try {
      if (error)
        std::rethrow_exception(error);
    } catch (const std::exception &e) {
      message += std::string(": ") + e.what();
    } catch (...) {
    }
    reply(res, 500, errorBody(message));
  });
  // Called once per answer written, whoever produced it.
  server.set_logger(
      [this](const httplib::Request &req, const httplib::Response &res) {
        state_.metrics->countRequest(endpointLabel(req.path), res.status);
      });
}

bool HttpServer::bind(std::string &error) {
  if (options_.port == 0)
    port_ = server_->bind_to_any_port(options_.host);
  else
    port_ = server_->bind_to_port(options_.host, options_.port) ? options_.port
                                                                : -1;
  if (port_ <= 0) {
    error = "cannot listen on " + options_.host + ":" +
            std::to_string(options_.port);
    return false;
  }
  if (!static_cast<BacklogServer &>(*server_).raiseBacklog(SOMAXCONN)) {
    error = "cannot raise the listen backlog";
    return false;
  }
  return true;
}

void HttpServer::start() {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() only stops a server that is running: wait until it is.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void HttpServer::stop() {
  std::lock_guard<std::mutex> lock(stopMutex_);
  if (stopped_)
    return;
  stopped_ = true;
  server_->stop();
  if (thread_.joinable())
    thread_.join();
}

} // namespace dtensor::server
