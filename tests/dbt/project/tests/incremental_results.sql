-- After two `dbt run`s: orders_appended holds all 6 rows (batch 1, then batch 2 appended),
-- orders_by_day keeps 2024-04-01 (orders 1, 2), has 2024-04-02 replaced by batch 2
-- (orders 3 at 9.75 and 4) and 2024-04-03 added (order 5). Returns the mismatches.
with got as (
    select 'appended' as model, count(*) as n, sum(order_id) as ids, sum(amount) as total
    from {{ ref('orders_appended') }}
    union all
    select 'by_day', count(*), sum(order_id), sum(amount)
    from {{ ref('orders_by_day') }}
),
expected as (
    select 'appended' as model, 6 as n, 18 as ids, 57.5 as total
    union all
    select 'by_day', 5, 15, 50.25
)
select e.model, e.n, g.n as got_n, e.ids, g.ids as got_ids, e.total, g.total as got_total
from expected e
left join got g on g.model = e.model
where g.n is null or g.n <> e.n or g.ids <> e.ids or g.total <> e.total
