import java.math.BigDecimal;
import java.sql.*;
import java.util.ArrayList;
import java.util.List;

/**
 * Drives Apiary through the Hive JDBC driver: a query, a multi-batch fetch, every Hive type
 * through its ResultSet getter with NULLs, ResultSetMetaData types/precision/scale, an error with
 * SQLSTATE, and DatabaseMetaData calls. Usage: JdbcClientTest JDBC_URL TYPES_QUERY
 */
public class JdbcClientTest {
    static int failures = 0;

    static void check(boolean ok, String what) {
        if (ok) {
            System.out.println("PASS " + what);
        } else {
            System.out.println("FAIL " + what);
            failures++;
        }
    }

    static void eq(Object got, Object want, String what) {
        boolean ok = want == null ? got == null : want.equals(got);
        check(ok, what + " (got " + got + ", want " + want + ")");
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String typesQuery = args[1];
        Class.forName("org.apache.hive.jdbc.HiveDriver");
        try (Connection c = DriverManager.getConnection(url, "jdbc_user", "")) {
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1 AS one")) {
                check(rs.next(), "simple query has a row");
                eq(rs.getInt(1), 1, "SELECT 1");
            }
            try (Statement s = c.createStatement()) {
                s.setFetchSize(700);
                try (ResultSet rs = s.executeQuery("SELECT value FROM range(20000) ORDER BY value")) {
                    long n = 0;
                    boolean ordered = true;
                    while (rs.next()) {
                        if (rs.getLong(1) != n) ordered = false;
                        n++;
                    }
                    eq(n, 20000L, "multi-batch fetch row count");
                    check(ordered, "multi-batch fetch order");
                }
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(typesQuery)) {
                ResultSetMetaData md = rs.getMetaData();
                int[] types = {Types.BOOLEAN, Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT,
                    Types.FLOAT, Types.DOUBLE, Types.DECIMAL, Types.VARCHAR, Types.VARCHAR, Types.CHAR,
                    Types.DATE, Types.TIMESTAMP, Types.BINARY, Types.ARRAY, Types.JAVA_OBJECT, Types.STRUCT,
                    Types.OTHER, Types.OTHER};
                for (int i = 0; i < types.length; i++) {
                    eq(md.getColumnType(i + 2), types[i], "column type of " + md.getColumnName(i + 2));
                }
                eq(md.getPrecision(9), 10, "decimal precision");
                eq(md.getScale(9), 2, "decimal scale");
                eq(md.getPrecision(11), 10, "varchar length");
                eq(md.getPrecision(12), 5, "char length");
                check(rs.next(), "types row 1");
                eq(rs.getBoolean("c_boolean"), true, "getBoolean");
                eq(rs.getByte("c_tinyint"), (byte) -7, "getByte");
                eq(rs.getShort("c_smallint"), (short) 300, "getShort");
                eq(rs.getInt("c_int"), 2147483647, "getInt");
                eq(rs.getLong("c_bigint"), 9007199254740993L, "getLong");
                eq(rs.getFloat("c_float"), 1.5f, "getFloat");
                eq(rs.getDouble("c_double"), 2.25, "getDouble");
                eq(rs.getBigDecimal("c_decimal"), new BigDecimal("12345678.90"), "getBigDecimal");
                eq(rs.getString("c_string"), "h\u00e9llo, \"world\"", "getString");
                eq(rs.getString("c_varchar"), "abc", "varchar");
                eq(rs.getString("c_char"), "ab   ", "char");
                eq(rs.getDate("c_date"), Date.valueOf("2024-02-29"), "getDate");
                eq(rs.getTimestamp("c_timestamp"), Timestamp.valueOf("2024-02-29 12:34:56.123456"), "getTimestamp");
                eq(new String((byte[]) rs.getObject("c_binary"), "UTF-8"), "bin", "BINARY via getObject (the 2.3 driver has no getBytes)");
                eq(rs.getString("c_array"), "[1,2,3]", "array as JSON");
                eq(rs.getString("c_map"), "{\"a\":1,\"b\":2}", "map as JSON");
                eq(rs.getString("c_struct"), "{\"x\":1,\"y\":\"z\"}", "struct as JSON");
                eq(rs.getString("c_interval_ym"), "1-2", "interval year-month");
                eq(rs.getString("c_interval_dt"), "1 02:03:04.000000000", "interval day-time");
                check(rs.next(), "types row 2");
                for (int i = 2; i <= md.getColumnCount(); i++) {
                    Object o = rs.getObject(i);
                    check(o == null && rs.wasNull(), "NULL in " + md.getColumnName(i));
                }
                check(!rs.next(), "only two rows");
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT * FROM missing_table");
                check(false, "missing table raises");
            } catch (SQLException e) {
                eq(e.getSQLState(), "42S02", "SQLSTATE of a missing table");
                check(e.getMessage().contains("Table not found 'missing_table'"), "error text: " + e.getMessage());
                eq(e.getErrorCode(), 10001, "error code");
            }
            DatabaseMetaData dm = c.getMetaData();
            eq(dm.getDatabaseProductName(), "Apache Hive", "product name");
            List<String> schemas = new ArrayList<>();
            try (ResultSet rs = dm.getSchemas()) {
                while (rs.next()) schemas.add(rs.getString("TABLE_SCHEM"));
            }
            check(schemas.contains("default"), "getSchemas lists default: " + schemas);
            int typeRows = 0;
            try (ResultSet rs = dm.getTypeInfo()) {
                while (rs.next()) typeRows++;
            }
            check(typeRows >= 15, "getTypeInfo rows: " + typeRows);
            try (ResultSet rs = dm.getFunctions(null, null, "upper")) {
                check(rs.next(), "getFunctions finds upper");
            }
            try (ResultSet rs = dm.getPrimaryKeys(null, "default", "x")) {
                check(!rs.next(), "getPrimaryKeys empty");
            }
        }
        System.out.println(failures == 0 ? "ALL PASSED" : failures + " FAILED");
        System.exit(failures == 0 ? 0 : 1);
    }
}
