import java.sql.*;

/**
 * Prints what the Hive JDBC driver's DatabaseMetaData reports, one tab-separated line per row,
 * each result set under a "## name" header. The calling test checks the lines.
 * Usage: JdbcMetadataDump JDBC_URL SCHEMA
 */
public class JdbcMetadataDump {
    static void dump(String name, ResultSet rs, String... columns) throws SQLException {
        System.out.println("## " + name);
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < columns.length; i++) {
                if (i > 0) b.append('\t');
                b.append(rs.getString(columns[i]));
            }
            System.out.println(b);
        }
        rs.close();
    }

    public static void main(String[] args) throws Exception {
        Class.forName("org.apache.hive.jdbc.HiveDriver");
        String schema = args[1];
        try (Connection c = DriverManager.getConnection(args[0], "meta", "")) {
            DatabaseMetaData md = c.getMetaData();
            dump("schemas", md.getSchemas(null, schema), "TABLE_SCHEM");
            dump("tables", md.getTables(null, schema, "%", null), "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS");
            dump("views", md.getTables(null, schema, "%", new String[] {"VIEW"}), "TABLE_NAME", "TABLE_TYPE");
            dump("external", md.getTables(null, schema, "%", new String[] {"EXTERNAL_TABLE"}), "TABLE_NAME");
            dump("columns", md.getColumns(null, schema, "orders", "%"), "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME",
                 "COLUMN_SIZE", "DECIMAL_DIGITS", "ORDINAL_POSITION", "IS_NULLABLE", "IS_AUTO_INCREMENT", "REMARKS");
            dump("escaped", md.getTables(null, schema, "o\\_%", null), "TABLE_NAME");
            dump("primary_keys", md.getPrimaryKeys(null, schema, "orders"), "COLUMN_NAME");
            ResultSet types = md.getTypeInfo();
            int n = 0;
            while (types.next()) n++;
            System.out.println("## type_info " + n);
            ResultSet fns = md.getFunctions(null, null, "upper");
            System.out.println("## function_upper " + (fns.next() ? fns.getString("FUNCTION_NAME") : "none"));
        }
    }
}
