/*
 * Lists the transactional ids a Kafka cluster knows, with their state, through the Java
 * Admin client's listTransactions (KIP-664), which the JavaScript clients do not offer:
 *
 *   java -cp 'kafka/lib/*' scripts/java/ListTransactions.java <bootstrap-servers>
 *
 * Prints one line per transactional id: "<transactional.id> <state> <producer id>".
 * Used by the integration tests (scripts/lib/list-transactions.ts).
 */
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionListing;

public class ListTransactions {
  public static void main(String[] args) throws Exception {
    Properties config = new Properties();
    config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args.length > 0 ? args[0] : "127.0.0.1:9092");
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    try (Admin admin = Admin.create(config)) {
      for (TransactionListing t : admin.listTransactions().all().get()) {
        System.out.println(t.transactionalId() + " " + t.state() + " " + t.producerId());
      }
    }
  }
}
