-- The seeded strings arrive exactly as written in seeds/customers.csv (dbt-hive binds them
-- with impyla, which escapes \ ' " with a backslash), an empty cell is '' in a string column
-- and NULL in a numeric one, as in Hive. Returns the rows that differ. No semicolon may appear
-- here, not even in a comment: dbt-hive splits every statement it sends on each one.
select id, name, note, credit
from {{ ref('customers') }}
where not coalesce(
       (id = 1 and name = 'O\'Brien' and note = 'She said "hi"' and credit = 10.5)
    or (id = 2 and name = 'Back\\slash' and note = 'C:\\temp\\new' and length(note) = 11)
    or (id = 3 and name = 'Plain' and note = '' and signup_date = date '2023-12-31')
    or (id = 4 and name = 'It\'s "both"' and note = 'ends with \\' and credit = 1000000.75)
    or (id = 5 and name like 'semi_colon' and length(name) = 10 and note like 'a,b_c'
        and credit is null),
    false)
