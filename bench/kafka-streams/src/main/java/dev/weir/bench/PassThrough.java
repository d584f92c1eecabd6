package dev.weir.bench;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Kafka Streams contestant of weir's benchmark: copies every record of the source topic
 * unchanged to the sink topic (byte-array serdes, {@code mapValues} identity).
 *
 * <p>Configuration, each from a {@code --name value} argument or else the environment variable
 * in brackets: {@code --bootstrap-servers} [KAFKA_BROKERS, default 127.0.0.1:9092],
 * {@code --application-id} [BENCH_GROUP], {@code --source} [BENCH_SOURCE], {@code --sink}
 * [BENCH_SINK], {@code --processing-guarantee} at_least_once | exactly_once_v2
 * [BENCH_GUARANTEE, default at_least_once], {@code --commit-interval-ms} [BENCH_COMMIT_INTERVAL_MS,
 * default: Kafka Streams' own], {@code --num-stream-threads} [BENCH_THREADS, default 1],
 * {@code --state-dir} [BENCH_STATE_DIR, default: Kafka Streams' own]. Every other setting is
 * Kafka Streams' default.
 *
 * <p>Stdout carries only JSON lines: {@code {"msg":"started"}} when the instance is RUNNING,
 * {@code {"msg":"stopped"}} after a clean close (SIGTERM; it leaves the group), {@code {"msg":"error",...}} on a fatal
 * error (then it exits with 1). Logs go to stderr at WARN.
 */
public final class PassThrough {
  private PassThrough() {}

  private static final Map<String, String> ENV_NAMES = Map.of(
      "bootstrap-servers", "KAFKA_BROKERS",
      "application-id", "BENCH_GROUP",
      "source", "BENCH_SOURCE",
      "sink", "BENCH_SINK",
      "processing-guarantee", "BENCH_GUARANTEE",
      "commit-interval-ms", "BENCH_COMMIT_INTERVAL_MS",
      "num-stream-threads", "BENCH_THREADS",
      "state-dir", "BENCH_STATE_DIR");

  public static void main(String[] args) throws InterruptedException {
    Map<String, String> options = parse(args);
    String source = required(options, "source");
    String sink = required(options, "sink");

    Properties props = new Properties();
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, options.getOrDefault("bootstrap-servers", "127.0.0.1:9092"));
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, required(options, "application-id"));
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, options.getOrDefault("processing-guarantee", StreamsConfig.AT_LEAST_ONCE));
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.parseInt(options.getOrDefault("num-stream-threads", "1")));
    if (options.containsKey("commit-interval-ms")) {
      props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.parseLong(options.get("commit-interval-ms")));
    }
    if (options.containsKey("state-dir")) props.put(StreamsConfig.STATE_DIR_CONFIG, options.get("state-dir"));

    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(source, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
        .mapValues(value -> value)
        .to(sink, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));

    KafkaStreams streams = new KafkaStreams(builder.build(), props);
    AtomicBoolean announced = new AtomicBoolean(false);
    CountDownLatch closed = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      if (now == KafkaStreams.State.RUNNING && announced.compareAndSet(false, true)) emit("{\"msg\":\"started\"}");
      if (now == KafkaStreams.State.ERROR) emit("{\"msg\":\"error\",\"state\":\"ERROR\"}");
    });
    streams.setUncaughtExceptionHandler(error -> {
      emit("{\"msg\":\"error\",\"error\":" + quote(String.valueOf(error)) + "}");
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      // Leave the group on close (Kafka Streams stays in it by default), so the benchmark can
      // delete the group at once; this happens after the measured window.
      streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(30)));
      emit("{\"msg\":\"stopped\"}");
      closed.countDown();
    }, "weir-bench-shutdown"));
    streams.start();
    closed.await();
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (Map.Entry<String, String> e : ENV_NAMES.entrySet()) {
      String value = System.getenv(e.getValue());
      if (value != null && !value.isEmpty()) options.put(e.getKey(), value);
    }
    for (int i = 0; i < args.length; i += 2) {
      String name = args[i].startsWith("--") ? args[i].substring(2) : "";
      if (!ENV_NAMES.containsKey(name) || i + 1 >= args.length) {
        throw new IllegalArgumentException("unknown option or missing value: " + args[i] + " (known: --" + String.join(", --", ENV_NAMES.keySet()) + ")");
      }
      options.put(name, args[i + 1]);
    }
    return options;
  }

  private static String required(Map<String, String> options, String name) {
    String value = options.get(name);
    if (value == null) throw new IllegalArgumentException("--" + name + " (or " + ENV_NAMES.get(name) + ") must be set");
    return value;
  }

  private static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }
}
