import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/** Runs one query through the Hive JDBC driver and prints each row's columns as the driver's
 * getString gives them, tab-separated (NULL as the word NULL). */
public class JdbcRows {
    public static void main(String[] args) throws Exception {
        Class.forName("org.apache.hive.jdbc.HiveDriver");
        try (Connection c = DriverManager.getConnection(args[0], "jdbc_user", "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(args[1])) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder line = new StringBuilder();
                for (int i = 1; i <= n; i++) {
                    String v = rs.getString(i);
                    if (i > 1) line.append('\t');
                    line.append(v == null ? "NULL" : v);
                }
                System.out.println(line);
            }
        }
    }
}
