import java.sql.*;

/**
 * Benchmark: fetches a query's rows through the Hive JDBC driver and prints rows/s.
 * Usage: JdbcFetchBench JDBC_URL QUERY FETCH_SIZE
 */
public class JdbcFetchBench {
    public static void main(String[] args) throws Exception {
        Class.forName("org.apache.hive.jdbc.HiveDriver");
        try (Connection c = DriverManager.getConnection(args[0], "bench", "");
             Statement s = c.createStatement()) {
            s.setFetchSize(Integer.parseInt(args[2]));
            long start = System.nanoTime();
            long n = 0;
            try (ResultSet rs = s.executeQuery(args[1])) {
                while (rs.next()) {
                    rs.getLong(1);
                    rs.getString(2);
                    rs.getDouble(3);
                    n++;
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            System.out.printf("rows=%d seconds=%.3f rate=%.0f%n", n, secs, n / secs);
        }
    }
}
